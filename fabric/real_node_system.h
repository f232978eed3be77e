// RealNodeSystem: NodeSystem on the real kernel.
// Spawn double-forks (the intermediate child exits at once, so the process is
// re-parented to init and never becomes our zombie), starts a new session,
// enters the node with EnterNode (unless netns_path is empty) and execs. A close-on-exec pipe
// carries the pid back, and an error text when entering or exec failed.
#pragma once

#include "fabric/node_system.h"

namespace fdrill {

class RealNodeSystem final : public NodeSystem {
 public:
  Result<int> Spawn(const SpawnSpec& spec) override;
  bool TcpConnects(const std::string& ip, int port, Duration timeout) override;
  void SleepFor(Duration d) override;
  Status AppendLine(const std::string& path, const std::string& line) override;
  Status ReplaceFile(const std::string& path, const std::string& text) override;
};

}  // namespace fdrill
