#include "harness/controller/cluster_launch.h"

#include <algorithm>
#include <atomic>
#include <sstream>
#include <thread>

#include "workloads/path_template.h"

namespace fdrill {

std::string RailInterfaces(int rails) {
  std::string out;
  for (int r = 0; r < rails; ++r) out += (out.empty() ? "fab" : ",fab") + std::to_string(r);
  return out;
}

std::vector<std::string> JobRankArgv(const WorkloadSpec& w, const std::string& fdrill_bin,
                                     const JobPlaces& at) {
  std::vector<std::string> command = w.command;
  for (auto& word : command) ReplaceAll(&word, "{checkpoint_dir}", at.checkpoint_dir);
  if (!w.WrapsRanks()) return command;
  std::vector<std::string> argv = {fdrill_bin, "job-rank"};
  if (w.Steps() && !at.metrics_path.empty()) {
    argv.insert(argv.end(), {"--jsonl", at.metrics_path});
    if (w.metrics_file) argv.push_back("--from-file");
    if (!w.metrics_preset.empty()) argv.insert(argv.end(), {"--preset", w.metrics_preset});
    if (!w.metrics_pattern.empty()) argv.insert(argv.end(), {"--pattern", w.metrics_pattern});
  }
  if (!w.framework.empty()) {
    argv.insert(argv.end(), {"--framework", w.framework, "--master-addr", at.master_addr,
                             "--master-port", std::to_string(at.master_port)});
    if (!at.ifnames.empty()) argv.insert(argv.end(), {"--socket-ifname", at.ifnames});
  }
  if (at.nice > 0) argv.insert(argv.end(), {"--nice", std::to_string(at.nice)});
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

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
  // A launcher of its own whose step lines the controller reads: each line
  // as printed (a Python job's too).
  if (w.Steps() && !w.WrapsRanks()) body = {"env", "PYTHONUNBUFFERED=1", "stdbuf", "-oL"};
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

Status CheckRshReachesEveryHost(const Scenario& s, ProcessRunner& runner, Duration timeout) {
  const WorkloadSpec& w = s.workload;
  if (s.Emulated() || w.launcher != "mpirun") return Status::Ok();
  // Open MPI splits plm_rsh_agent on spaces ("ssh -F FILE").
  std::vector<std::string> agent;
  std::istringstream words(w.rsh_agent);
  for (std::string word; words >> word;) agent.push_back(word);
  if (agent.empty()) return Status::Ok();
  const std::vector<std::string> hosts = s.NodeNames();
  // 32 at a time: a thousand hosts cost a few timeouts, not a thousand.
  std::vector<std::string> why(hosts.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < hosts.size(); i = next++) {
      std::vector<std::string> argv = agent;
      argv.insert(argv.end(), {hosts[i], "true"});
      auto r = runner.Run(argv, timeout);
      if (!r.ok()) {
        why[i] = r.status().message();
      } else if (r->exit_code != 0) {
        why[i] = r->err.empty() ? "exit " + std::to_string(r->exit_code) : r->err;
        while (!why[i].empty() && (why[i].back() == '\n' || why[i].back() == '\r'))
          why[i].pop_back();
      }
    }
  };
  std::vector<std::thread> workers;
  for (size_t k = 0; k < std::min<size_t>(32, hosts.size()); ++k) workers.emplace_back(worker);
  for (auto& t : workers) t.join();
  std::string refused;
  int count = 0;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (why[i].empty()) continue;
    if (++count <= 5) refused += "\n  " + hosts[i] + ": " + why[i];
  }
  if (count == 0) return Status::Ok();
  if (count > 5) refused += "\n  ... and " + std::to_string(count - 5) + " more";
  return FailedPrecondition(
      s.file + ": workload.launcher mpirun starts its daemons with `" + w.rsh_agent +
      " HOST ...`, and " + std::to_string(count) + " of " + std::to_string(hosts.size()) +
      " hosts refused `" + w.rsh_agent + " HOST true`:" + refused + "\nmake `" + w.rsh_agent +
      " HOST true` work without a password or prompt for every host (keys, known_hosts), or set "
      "workload.rsh_agent; nothing was applied");
}

}  // namespace fdrill
