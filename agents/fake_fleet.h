// A fleet of fake agents in one process (`fdrill-agent --fake-host
// --fake-agents N`), for loading a controller with thousands of agents on one
// small box (bench/fanout_bench).
//
// Why one process and not N: an fdrill-agent process costs ~1 thread, a few
// MiB of RSS and a 50 Hz tick; 10,000 of them would need ~40 GiB and 500,000
// wake-ups a second of a 2-core box and measure the scheduler, not the
// controller. Here every agent is still a whole agent as the controller sees
// it — its own address (127.x.y.z, all of 127/8 is local on Linux, nothing
// to configure), its own listener, its own TLS certificate naming its node
// (the controller checks CN = node), its own AgentService with journal,
// audit log, lease and max-duration watch — on a FakeHost. They share one
// io_context and one thread, and one 20 ms ticker walks every service
// instead of one timer each. What that sharing changes, and what it does
// not, is in docs/performance.md.
//
// Agent i is node <prefix><i> on FakeAgentAddress(first, i), port `port`,
// state in <state_dir>/<node>/. Each agent holds ~3 file descriptors (its
// listener, its session, its audit log); where RLIMIT_NOFILE's hard limit
// cannot be raised (no CAP_SYS_RESOURCE; 20,000 on the bench box) a larger
// fleet is split over processes, each serving agents first_index.. .
// With ca_dir (ca.pem + ca.key as `fdrill certs init` writes them) each
// agent gets a fresh leaf for its node, written to <state_dir>/<node>/tls/;
// without it the fleet serves plaintext (insecure).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "common/core/result.h"

namespace fdrill {

struct FakeFleetConfig {
  int agents = 1;
  int first_index = 0;  // this process serves agents first_index .. first_index + agents - 1
  std::string first_address = "127.1.0.1";
  uint16_t port = 7100;
  std::string node_prefix = "f";
  std::string state_dir;
  std::string ca_dir;  // "" = plaintext
  std::set<std::string> allowlist;
};

// first + i as a 32-bit address, skipping host parts .0 and .255 (first
// itself must not end in .0 or .255). Empty when it would leave 127/8.
std::string FakeAgentAddress(const std::string& first, int i);
inline std::string FakeAgentNode(const std::string& prefix, int i) {
  return prefix + std::to_string(i);
}

// File descriptors a fake agent holds: its listener, its audit log, its
// journal (open from the first apply on) and the controller's session; and
// what a fleet process keeps beside them.
inline constexpr int kFakeAgentFds = 4, kFakeFleetFdSlack = 256;
// The most fake agents one process can serve under a hard RLIMIT_NOFILE.
inline int MaxFakeAgents(uint64_t hard_fd_limit) {
  if (hard_fd_limit <= static_cast<uint64_t>(kFakeFleetFdSlack)) return 0;
  return static_cast<int>((hard_fd_limit - kFakeFleetFdSlack) / kFakeAgentFds);
}

// Builds every agent, prints "fdrill-agent: N fake agents ready" on stdout
// (a line a bench can wait for), serves until SIGINT/SIGTERM, reverts every
// agent's faults, returns the exit code (0, or 2 when it could not start).
int RunFakeFleet(const FakeFleetConfig& config);

}  // namespace fdrill
