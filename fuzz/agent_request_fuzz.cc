// libFuzzer target: the agent's admission of requests (agents/agent_service.h
// over the no-op fake host: agents/fake_host.h) fed arbitrary message
// sequences — one JSON request per input line, from one of three callers
// the line's first byte picks (two controllers, an observer). Leases,
// limits, panic latch and clear, applies and reverts in any order and shape.
// Beyond "no crash, no sanitizer report" it checks the rules hold: an apply
// the agent accepts came from the caller and drill that hold the live lease
// (as this harness tracks it from the replies), never while the panic latch
// is set, never from the observer; and a lease is never granted while
// latched. Each line is read as the wire's decoder reads a frame (a line
// it refuses — nested too deep, not JSON — is a closed connection). A line starting with 'h' is not
// a request: its bytes, whatever they are, become a netdev that appears on the fake machine (a name
// that is not UTF-8 once stopped the agent's timers). After every line the agent ticks, as its
// timer would, with every push and reply serialised as the wire does: a tick that throws (a dead
// timer loop, the supervisor's view) or a message that cannot be encoded
// and read back is a finding.
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
#include "common/wire/wire.h"
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

// The line's bytes as the wire's decoder reads a frame's body: refused
// when nested past kMaxFrameDepth (by its bytes, before parsing) or not
// JSON (the session would close); the envelope (v, id) is added after.
Json FromTheWire(std::string_view bytes) {
  if (fdrill::JsonTextDepth(bytes) > fdrill::kMaxFrameDepth) return Json();
  return Json::parse(bytes, nullptr, /*allow_exceptions=*/false);
}

// The agent's timer: a tick that throws is a dead timer loop.
void TickAsTheTimerWould(fdrill::AgentService& agent) {
  try {
    agent.Tick();
  } catch (...) {
    std::abort();
  }
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
  // What a session does with a push or a reply: it must encode, and the
  // controller's decoder must read it back.
  auto must_encode = [](const Json& msg) {
    fdrill::FrameDecoder back;
    back.Feed(fdrill::EncodeFrame(msg));
    auto read = back.Next();
    if (!read.ok() || !read->has_value()) std::abort();
  };
  agent.set_push(must_encode);

  std::optional<std::pair<std::string, std::string>> owner;  // subject, drill
  std::string_view in(reinterpret_cast<const char*>(data), size);
  uint64_t id = 0;
  while (!in.empty()) {
    const size_t nl = in.find('\n');
    std::string_view line = in.substr(0, nl);
    in.remove_prefix(nl == std::string_view::npos ? in.size() : nl + 1);
    if (line.size() < 2) continue;
    if (line[0] == 'h') {
      host.kernel.AddInterface(std::string(line.substr(1)));
      TickAsTheTimerWould(agent);
      continue;
    }
    const fdrill::Caller caller = CallerFor(static_cast<unsigned char>(line[0]));
    Json body = FromTheWire(line.substr(1));
    if (!body.is_object()) continue;
    const std::string type = body.contains("type") && body["type"].is_string()
                                 ? body["type"].get<std::string>()
                                 : std::string();
    body["id"] = ++id;
    const bool latched = agent.panic_latched();
    const Json reply = agent.Handle(body, caller);
    if (!reply.is_null()) must_encode(reply);  // null: a renewal acknowledged by push
    if (reply.is_null()) {
      if (type != "lease") std::abort();
      clock.Advance(std::chrono::milliseconds(1));
      TickAsTheTimerWould(agent);
      continue;
    }
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
    TickAsTheTimerWould(agent);
  }
  return 0;
}
