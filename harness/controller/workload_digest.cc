// WorkloadSupervisor's end-of-run checks of what the job computed: mode:
// train's final digest against fdrill-train-ref's, and expect.digest, a
// job's last "KEY: VALUE" line against the same command's fault-free rerun.
// The rest of the supervisor: workload_supervisor.cc.
#include <cstdlib>
#include <filesystem>

#include "common/host/host.h"
#include "harness/controller/drill.h"
#include "harness/controller/workload_supervisor.h"
#include "workloads/job_rank.h"

namespace fdrill {

namespace {

// VALUE of the last "KEY: VALUE" line of TEXT (a job's log: "digest: ...",
// "steps_done: ..."), "" when it has none.
std::string LastValueOf(const std::string& text, const std::string& key) {
  const size_t at = ("\n" + text).rfind("\n" + key + ": ");
  if (at == std::string::npos) return "";
  const size_t from = at + key.size() + 2;
  return text.substr(from, text.find_first_of("\r\n", from) - from);
}

}  // namespace

void WorkloadSupervisor::CheckDigest() {
  std::string tail;
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    tail = last_log_tail_;
  }
  // "digest: <hex>" and "steps_done: N", as fdrill-collective --train prints them.
  const std::string digest = LastValueOf(tail, "digest");
  const std::string steps = LastValueOf(tail, "steps_done");
  if (digest.empty() || steps.empty()) {
    events_.DigestMissing();
    return;
  }
  const std::vector<std::string> argv = {opt_.bin_dir + "/fdrill-train-ref",
                                         "--nranks",
                                         std::to_string(ReportingRanks()),
                                         "--steps",
                                         steps,
                                         "-b",
                                         std::to_string(w_.size_bytes)};
  auto r = runner_.Run(argv, std::chrono::seconds(300));
  std::string expected;
  if (r.ok() && r->exit_code == 0 && r->out.rfind("digest: ", 0) == 0) {
    expected = r->out.substr(8, 16);
  }
  if (expected.empty()) {
    events_.Error("fdrill-train-ref failed: " + (r.ok() ? r->err : r.status().message()));
    return;
  }
  events_.DigestCheck(std::stoll(steps), digest, expected);
}

void WorkloadSupervisor::CheckJobDigest() {
  const ExpectSpec& expect = s_.expect;
  std::string tail;
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    tail = last_log_tail_;
  }
  const std::string& key = expect.digest_key;
  const std::string digest = LastValueOf(tail, key);
  if (digest.empty()) {
    events_.DigestMissing();
    events_.Error("expect.digest: the job printed no \"" + key + ": " +
                  (expect.digest_tolerance ? "NUMBER" : "HEX") + "\" line before it ended (see " +
                  DrillEvents::LogName(w_.name) + ")");
    return;
  }
  // The same command, fault-free: mpirun on this host's loopback, as many
  // ranks, its own checkpoint directory (empty: it starts from step 0).
  const std::string dir = events_.dir() + "/reference";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir + "/checkpoint", ec);
  const int ranks = static_cast<int>(w_.nodes.size()) * w_.ranks_per_node;
  std::vector<std::string> argv = {
      "mpirun",          "--allow-run-as-root", "-np", std::to_string(ranks),
      "--oversubscribe", "--bind-to",           "none"};
  for (const auto& [name, value] :
       {std::pair{"mpi_yield_when_idle", "1"}, std::pair{"btl", "self,vader,tcp"},
        std::pair{"btl_tcp_if_include", "lo"}, std::pair{"oob_tcp_if_include", "lo"}}) {
    argv.insert(argv.end(), {"--mca", name, value});
  }
  // Its step lines are not the drill's: no metrics path.
  std::vector<std::string> job =
      JobRankArgv(w_, opt_.bin_dir + "/fdrill",
                  {std::filesystem::absolute(dir + "/checkpoint").string(), "", "127.0.0.1",
                   kMasterPort + 1, "lo"});
  argv.insert(argv.end(), job.begin(), job.end());
  auto r = runner_.Run(argv, std::chrono::seconds(600));
  const std::string expected = r.ok() ? LastValueOf(r->out, key) : "";
  if (expected.empty()) {
    events_.Error("expect.digest: the fault-free run on loopback printed no " + key + " (exit " +
                  (r.ok() ? std::to_string(r->exit_code) + "): " + r->err.substr(0, 2000)
                          : std::string("none): ") + r.status().message()));
    return;
  }
  (void)events_.WriteFile("reference.log", r->out + r->err);
  events_.DigestCheck(std::atoll(LastValueOf(tail, "steps_done").c_str()), digest, expected, key,
                      expect.digest_tolerance);
}

}  // namespace fdrill
