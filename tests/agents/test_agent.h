// What the AgentService tests share. There are no sockets: a request goes
// straight to Handle, as the agent's server would pass it, from peer
// "test", ids counting up from 1.
//
// TestAgentConfig  node NODE, its journal and logs under STATE_DIR, mgmt0
//                  its management interface (never faulted).
// FakeHostAgent    `fdrill-agent --fake-host` without its server: the no-op
//                  host (agents/fake_host.h), a fake clock, and a state
//                  directory of the test's own (ScratchPath(PREFIX)), which
//                  the destructor removes. With `verbs`, the host's RDMA
//                  view is that one (tests/fakes/fake_verbs.h).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "agents/agent_service.h"
#include "agents/fake_host.h"
#include "tests/fakes/fake_clock.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {

inline AgentConfig TestAgentConfig(const std::string& node,
                                   const std::filesystem::path& state_dir) {
  AgentConfig c;
  c.node = node;
  c.state_dir = state_dir.string();
  c.mgmt_interface = "mgmt0";
  return c;
}

struct FakeHostAgent {
  // `configure`, when given, changes the config before the service starts.
  FakeHostAgent(const std::string& node, const std::string& prefix,
                const std::function<void(AgentConfig&)>& configure = nullptr,
                Verbs* verbs = nullptr)
      : dir(ScratchPath(prefix)) {
    std::filesystem::create_directories(dir);
    AgentConfig c = TestAgentConfig(node, dir);
    if (configure) configure(c);
    Host host = fake.host();
    host.verbs = verbs;
    service = std::make_unique<AgentService>(c, host, clock);
    Call("lease", {{"ttl_ms", 86400000}});  // applies need a lease (agents/lease.h)
  }
  ~FakeHostAgent() { std::filesystem::remove_all(dir); }
  FakeHostAgent(const FakeHostAgent&) = delete;
  FakeHostAgent& operator=(const FakeHostAgent&) = delete;

  Json Call(const std::string& type, Json body = Json::object()) {
    return service->Handle(MakeRequest(type, ++last_id, std::move(body)), "test");
  }
  // Applies fault ID, of KIND with PARAMS.
  Json Apply(const std::string& id, const std::string& kind, Json params) {
    return Call("apply", {{"fault_id", id}, {"kind", kind}, {"params", std::move(params)}});
  }

  std::filesystem::path dir;
  FakeHost fake;
  FakeClock clock;
  std::unique_ptr<AgentService> service;
  uint64_t last_id = 0;
};

}  // namespace fdrill
