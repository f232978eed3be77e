#include "fabric/mpirun.h"

#include <utility>

namespace fdrill {

std::string MpirunHostfile(const FabricState& state, int ranks_per_node) {
  std::string out;
  for (const auto& n : state.nodes)
    out += n.FabricIp() + " slots=" + std::to_string(ranks_per_node) + "\n";
  return out;
}

std::string FabricSubnets(const FabricState& state) {
  std::string out;
  for (const auto& subnet : state.RailSubnets()) out += (out.empty() ? "" : ",") + subnet;
  return out;
}

std::vector<std::string> MpirunArgv(const FabricState& state, int ranks_per_node,
                                    const std::string& fdrill_bin,
                                    const std::vector<std::string>& program_argv,
                                    const std::string& hostfile_path) {
  const std::string subnets = FabricSubnets(state);
  int ranks = static_cast<int>(state.nodes.size()) * ranks_per_node;
  std::vector<std::string> argv = {
      "mpirun",     "--allow-run-as-root",
      "-np",        std::to_string(ranks),
      "--hostfile", hostfile_path,
      "--map-by",   "ppr:" + std::to_string(ranks_per_node) + ":node",
      "--bind-to",  "none",
  };
  // The MCA parameters; mpirun.h says why each.
  const std::pair<const char*, std::string> mca[] = {{"mpi_yield_when_idle", "1"},
                                                     {"plm_rsh_agent", fdrill_bin + " fabric rsh"},
                                                     {"rtc", "^hwloc"},
                                                     {"pml", "ob1"},
                                                     {"btl", "self,vader,tcp"},
                                                     {"btl_tcp_if_include", subnets},
                                                     {"oob_tcp_if_include", subnets}};
  for (const auto& [name, value] : mca) argv.insert(argv.end(), {"--mca", name, value});
  argv.insert(argv.end(), program_argv.begin(), program_argv.end());
  return argv;
}

}  // namespace fdrill
