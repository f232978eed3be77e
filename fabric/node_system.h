// The few things the fabric does to the machine that are not a command:
// starting a long-lived process inside a node's namespaces (or, for the
// agents' supervisor, in the root namespace), probing a TCP port, waiting,
// appending a line to a log and replacing a file whole. Everything else (ip,
// mount, unshare, kill, mkdir) goes through ProcessRunner as argv, and files
// through SysFs.
//
// RealNodeSystem (real_node_system.h) does it with fork/setns/exec and
// sockets; tests use a recording fake. One thread at a time per instance.
#pragma once

#include <string>
#include <vector>

#include "common/core/clock.h"
#include "common/core/result.h"
#include "common/core/units.h"
#include "common/host/host.h"
#include "fabric/fabric_state.h"

namespace fdrill {

// A process to start inside a node: own session, the node's network and UTS
// namespaces, TMPDIR set, stdin from /dev/null, stdout and stderr appended
// to log_path. With netns_path empty it stays in the caller's namespaces
// (uts_path and tmpdir are then ignored): the agents' supervisor.
struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is an absolute path
  std::string netns_path;         // "/run/netns/fdrill-n0"; "": the caller's
  std::string uts_path;           // the node's UTS bind mount
  std::string tmpdir;
  std::string log_path;
  std::string files_root;  // the node's own /etc/fdrill, /var/lib/fdrill (node_enter.h); "": none
};

// argv started inside node n (its namespaces, TMPDIR and own files), its
// output appended to log_path.
inline SpawnSpec InNode(const FabricNode& n, std::vector<std::string> argv, std::string log_path) {
  return {std::move(argv), n.NetnsPath(), n.uts_path, n.tmpdir, std::move(log_path), n.files_root};
}

class NodeSystem {
 public:
  virtual ~NodeSystem() = default;
  // Starts spec detached (not our child: it outlives us and is never a
  // zombie of ours). Returns its pid once it has exec'd; an error when it
  // could not enter the namespaces or exec.
  virtual Result<int> Spawn(const SpawnSpec& spec) = 0;
  // One connect() attempt to ip:port from the root namespace.
  virtual bool TcpConnects(const std::string& ip, int port, Duration timeout) = 0;
  virtual void SleepFor(Duration d) = 0;
  // Appends `line` and a newline to the file at `path` (O_APPEND, created
  // when missing): a note in an agent's log between its lives.
  virtual Status AppendLine(const std::string& path, const std::string& line) = 0;
  // Writes `text` to PATH.partial and renames it over `path`, so a reader
  // sees the old file or the new one, never half (fabric.json, rewritten by
  // the supervisor while `fdrill run` or `fabric status` reads it).
  virtual Status ReplaceFile(const std::string& path, const std::string& text) = 0;
};

// Everything fabric up/down/status act through.
struct FabricHost {
  ProcessRunner* runner = nullptr;
  SysFs* fs = nullptr;
  NodeSystem* node = nullptr;
  const Clock* clock = nullptr;
};

}  // namespace fdrill
