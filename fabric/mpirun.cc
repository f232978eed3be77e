#include "fabric/mpirun.h"

#include <utility>

#include "fabric/fabric_state.h"

namespace fdrill {

namespace {

std::string Joined(const std::vector<std::string>& subnets) {
  std::string out;
  for (const auto& subnet : subnets) out += (out.empty() ? "" : ",") + subnet;
  return out;
}

}  // namespace

std::string MpirunHostfile(const std::vector<std::string>& fabric_ips, int ranks_per_node) {
  std::string out;
  for (const auto& ip : fabric_ips) out += ip + " slots=" + std::to_string(ranks_per_node) + "\n";
  return out;
}

std::string MpirunHostfile(const FabricState& state, int ranks_per_node) {
  std::vector<std::string> ips;
  for (const auto& n : state.nodes) ips.push_back(n.FabricIp());
  return MpirunHostfile(ips, ranks_per_node);
}

std::string FabricSubnets(const FabricState& state) { return Joined(state.RailSubnets()); }

std::vector<std::string> MpirunArgv(size_t nodes, const std::vector<std::string>& rail_subnets,
                                    int ranks_per_node, const std::string& fdrill_bin,
                                    const std::vector<std::string>& program_argv,
                                    const std::string& hostfile_path) {
  const std::string subnets = Joined(rail_subnets);
  int ranks = static_cast<int>(nodes) * ranks_per_node;
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

std::vector<std::string> MpirunArgv(const FabricState& state, int ranks_per_node,
                                    const std::string& fdrill_bin,
                                    const std::vector<std::string>& program_argv,
                                    const std::string& hostfile_path) {
  return MpirunArgv(state.nodes.size(), state.RailSubnets(), ranks_per_node, fdrill_bin,
                    program_argv, hostfile_path);
}

}  // namespace fdrill
