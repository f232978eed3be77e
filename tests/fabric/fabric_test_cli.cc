// `fabric rsh HOST WORDS...` and `fabric exec NODE -- ARGV...` for the e2e
// test's own fabric (FDRILL_E2E_FABRIC_DIR), so mpirun can be tested before
// and without the real `fdrill` binary. Same library calls as fdrill's CLI.
#include <cstdio>
#include <string>
#include <vector>

#include "fabric/fabric_state.h"
#include "fabric/node_enter.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 3 || args[0] != "fabric" || (args[1] != "rsh" && args[1] != "exec")) {
    std::fprintf(stderr, "usage: %s fabric rsh HOST WORDS... | fabric exec NODE -- ARGV...\n",
                 argv[0]);
    return 2;
  }
  auto state = fdrill::LoadFabricState(FDRILL_E2E_FABRIC_DIR);
  if (!state.ok()) {
    std::fprintf(stderr, "%s\n", state.status().message().c_str());
    return 2;
  }
  std::vector<std::string> rest(args.begin() + 2, args.end());
  fdrill::Status s;
  if (args[1] == "rsh") {
    s = fdrill::RshExec(*state, rest);
  } else {
    const fdrill::FabricNode* node = state->FindNode(rest[0]);
    std::vector<std::string> cmd(rest.begin() + 1, rest.end());
    if (!cmd.empty() && cmd[0] == "--") cmd.erase(cmd.begin());
    s = node ? fdrill::ExecInNode(*node, cmd) : fdrill::NotFound("no node " + rest[0]);
  }
  std::fprintf(stderr, "%s\n", s.message().c_str());
  return 2;
}
