// `fdrill fabric down`: removes every trace of a fabric with this layout.
//
// Contract:
// - Idempotent: on a machine with no fabric it does nothing and says so.
// - Works without fabric.json (after a crash): namespaces are found in
//   `ip netns list` by netns_prefix, root-namespace links in `ip -o link show`
//   by root_prefix, UTS bind mounts in /proc/self/mountinfo under state_dir.
// - Agents (known only from fabric.json) get SIGTERM, SIGKILL after 3 s, and
//   only while /proc/<pid>/cmdline still names the agent for that node.
// - Best effort: one failing removal does not stop the others; the error
//   lists every failure.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fabric/fabric_state.h"
#include "fabric/node_system.h"

namespace fdrill {

struct DownReport {
  bool found_nothing = false;
  int agents_stopped = 0;
  int agents_killed = 0;             // needed SIGKILL
  std::vector<std::string> removed;  // "netns fdrill-n0", "link fdm-br", "mount ...", "dir ..."
};

struct DownOptions {
  FabricLayout layout = FabricLayout::Default();
  Duration term_grace = std::chrono::seconds(3);
};

Result<DownReport> FabricDown(const DownOptions& options, const FabricHost& host);

}  // namespace fdrill
