// libFuzzer target: the agent's admission of requests (agents/agent_service.h
// over the no-op fake host: agents/fake_host.h) fed arbitrary message
// sequences — one JSON request per input line, from one of three callers
// the line's first byte picks (two controllers, an observer). Leases,
// limits, panic latch and clear, applies and reverts in any order and shape.
// Beyond "no crash, no sanitizer report" it checks the rules hold: an apply
// the agent accepts came from the caller and drill that hold the live lease
// (as this harness tracks it from the replies), never while the panic latch
// is set, never from the observer; and a lease is never granted while
// latched.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <spdlog/spdlog.h>

#include "agents/agent_service.h"
#include "agents/fake_host.h"
#include "harness/wire/wire.h"
#include "tests/fakes/fake_clock.h"

namespace {

using fdrill::Json;

// This process's scratch directory, made on first use and removed at exit.
// The agent logs every request; at fuzzing rates that is noise, so logging
// is switched off on the same first use.
const std::string& ScratchDir() {
  // Never destroyed, so the exit handler can still read it.
  static const std::string* dir = [] {
    spdlog::set_level(spdlog::level::off);
    char tmpl[] = "/tmp/fdrill-agent-fuzz.XXXXXX";
    return new std::string(mkdtemp(tmpl));
  }();
  static const bool cleanup_registered =
      std::atexit([] { std::filesystem::remove_all(*dir); }) == 0;
  (void)cleanup_registered;
  return *dir;
}

fdrill::Caller CallerFor(unsigned char pick) {
  static const fdrill::Caller kCallers[] = {
      {"10.0.0.1:1", "CN=a,OU=controller", "controller", "1", true},
      {"10.0.0.2:1", "CN=b,OU=controller", "controller", "2", true},
      {"10.0.0.3:1", "CN=w,OU=observer", "observer", "3", true},
  };
  return kCallers[pick % 3];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = ScratchDir();
  // A fresh agent per input: an empty journal, audit log and latch.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  fdrill::FakeClock clock;
  fdrill::FakeHost host;
  fdrill::AgentConfig config;
  config.node = "n1";
  config.state_dir = dir;
  config.mgmt_interface = "mgmt0";
  fdrill::AgentService agent(config, host.host(), clock);

  std::optional<std::pair<std::string, std::string>> owner;  // subject, drill
  std::string_view in(reinterpret_cast<const char*>(data), size);
  uint64_t id = 0;
  while (!in.empty()) {
    const size_t nl = in.find('\n');
    std::string_view line = in.substr(0, nl);
    in.remove_prefix(nl == std::string_view::npos ? in.size() : nl + 1);
    if (line.size() < 2) continue;
    const fdrill::Caller caller = CallerFor(static_cast<unsigned char>(line[0]));
    Json body = Json::parse(line.substr(1), nullptr, /*allow_exceptions=*/false);
    if (!body.is_object()) continue;
    const std::string type = body.contains("type") && body["type"].is_string()
                                 ? body["type"].get<std::string>()
                                 : std::string();
    body["id"] = ++id;
    const bool latched = agent.panic_latched();
    const Json reply = agent.Handle(body, caller);
    if (!reply.is_object() || reply.value("id", uint64_t{0}) != id) std::abort();
    const bool ok = reply.value("ok", false);
    const auto drill = body.contains("drill") && body["drill"].is_string()
                           ? body["drill"].get<std::string>()
                           : std::string();
    const auto who = std::make_pair(caller.subject, drill);
    if (type == "apply" && ok && !reply.value("already_applied", false)) {
      if (latched || caller.role != "controller" || owner != who) std::abort();
    }
    if (type == "lease" && ok) {
      const Json ttl = body.value("ttl_ms", Json(5000));
      if (ttl == Json(0)) {
        if (owner == who) owner.reset();
      } else {
        if (latched) std::abort();
        owner = who;
      }
    }
    if (type == "revert_all" && ok && body.value("latch", Json(false)) == Json(true)) owner.reset();
    clock.Advance(std::chrono::milliseconds(1));  // never enough to lapse a lease
  }
  return 0;
}
