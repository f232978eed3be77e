#include "harness/controller/cluster_launch.h"

namespace fdrill {

std::string ClusterHostfile(const Scenario& s) {
  std::string out;
  for (const auto& h : s.NodeNames())
    out += h + " slots=" + std::to_string(s.workload.ranks_per_node) + "\n";
  return out;
}

std::vector<std::string> ClusterLaunchArgv(const Scenario& s,
                                           const std::vector<std::string>& program,
                                           const std::string& hostfile_path) {
  const WorkloadSpec& w = s.workload;
  std::vector<std::string> body;
  if (w.output == "nccl-tests") body = {"stdbuf", "-oL"};
  body.insert(body.end(), program.begin(), program.end());
  if (w.launcher == "none") return body;
  const std::string n = std::to_string(s.nodes), r = std::to_string(w.ranks_per_node);
  std::vector<std::string> argv;
  if (w.launcher == "srun") {
    // The allocation's own expression (srun needs fabric: {slurm: true}).
    argv = {"srun",
            "--nodes=" + n,
            "--ntasks-per-node=" + r,
            "--nodelist=" + s.slurm_nodelist,
            "--kill-on-bad-exit=1",
            "--unbuffered"};
  } else {
    argv = {"mpirun",
            "--hostfile",
            hostfile_path,
            "-np",
            std::to_string(s.nodes * w.ranks_per_node),
            "--map-by",
            "ppr:" + r + ":node",
            "--mca",
            "plm_rsh_agent",
            w.rsh_agent};
  }
  argv.insert(argv.end(), w.launcher_args.begin(), w.launcher_args.end());
  argv.insert(argv.end(), body.begin(), body.end());
  return argv;
}

}  // namespace fdrill
