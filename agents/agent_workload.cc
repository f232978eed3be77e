// AgentService's workload requests (agent_service.h): start a job (or
// only watch its metrics directory), stop it, remove the run's directory,
// and the tail of its log that an exit carries.
#include <signal.h>

#include <filesystem>
#include <fstream>

#include "agents/agent_service.h"
#include "common/core/json.h"
#include "common/core/log.h"
#include "common/wire/protocol.h"
#include "injectors/ranks.h"

namespace fdrill {

Result<Json> AgentService::WorkloadStart(const Json& req) {
  std::vector<std::string> argv = req.value(proto::key::kArgv, std::vector<std::string>{});
  std::map<std::string, std::string> env =
      req.value(proto::key::kEnv, std::map<std::string, std::string>{});
  std::error_code ec_ignored;
  std::string metrics_dir = req.value(proto::key::kMetricsDir, "");
  if (!metrics_dir.empty()) {
    std::error_code ec;
    const bool created = std::filesystem::create_directories(metrics_dir, ec);
    if (ec) return FailedPrecondition("cannot create " + metrics_dir + ": " + ec.message());
    // On a real cluster the ranks run as the operator and write here; the
    // agent (root) made the run's directory, so it opens it as /tmp is:
    // anyone may create files, only their owner may remove them.
    if (created) {
      std::filesystem::permissions(
          metrics_dir, std::filesystem::perms::all | std::filesystem::perms::sticky_bit, ec);
    }
    tail_.Watch(metrics_dir);
    if (rank_cpu_ != nullptr) rank_cpu_->ExpectRanks();  // a run's ranks start now
  }
  if (argv.empty())
    return Json{{proto::key::kStarted, false}, {proto::key::kWatching, metrics_dir}};
  std::string log = config_.state_dir + "/workload.log";
  std::filesystem::remove(log, ec_ignored);
  if (auto s = workload_.Start(argv, env, log); !s.ok()) return s;
  if (rank_cpu_ != nullptr) rank_cpu_->ExpectRanks();
  return Json{
      {proto::key::kStarted, true}, {proto::key::kPid, workload_.pid()}, {proto::key::kLog, log}};
}

// With a stop_file, asks the workload to stop by itself (fdrill-collective
// --stop-file: every rank ends after the same iteration) and returns at once;
// the exit arrives as a workload_exit push. Without one, ends the process
// group now.
int AgentService::KillRanks() {
  if (host_.procs == nullptr) return 0;
  auto ranks = FindRanks(*host_.procs, std::nullopt);
  if (!ranks.ok()) return 0;  // none left
  int killed = 0;
  for (const RankProc& r : *ranks) {
    if (SignalIfSame(*host_.procs, r.pid, r.start_ticks, SIGKILL).ok()) ++killed;
  }
  spdlog::warn("killed {} workload rank(s) left by a stopped job", killed);
  return killed;
}

Result<Json> AgentService::WorkloadStop(const Json& req) {
  std::string stop_file = req.value(proto::key::kStopFile, "");
  if (!stop_file.empty()) {
    std::ofstream touch(stop_file);
    if (!touch) return FailedPrecondition("cannot create stop file " + stop_file);
    return Json{{proto::key::kRequested, true}, {proto::key::kRunning, workload_.running()}};
  }
  // kill: a hung job (issue #8's restart policy): no grace for the launcher,
  // and every fdrill-collective rank in this node's namespace is killed too —
  // a stopped (SIGSTOP) rank ignores the launcher's SIGTERM.
  const bool kill = req.value(proto::key::kKill, false);
  auto code = workload_.Stop(kill ? Duration{} : Duration(std::chrono::seconds(5)));
  Json out = {{proto::key::kExitCode, code ? Json(*code) : Json(nullptr)},
              {proto::key::kLogTail, LogTail()}};
  if (kill) out[proto::key::kRanksKilled] = KillRanks();
  return out;
}

Result<Json> AgentService::RunDirRemove(const Json& req) {
  const std::string dir = req.value(proto::key::kDir, "");
  if (dir.empty() || dir != tail_.dir()) {
    return FailedPrecondition("run_dir_remove " + dir +
                              ": not the run directory this agent watches (" +
                              (tail_.dir().empty() ? std::string("none") : tail_.dir()) + ")");
  }
  if (std::filesystem::path(dir).filename().string().rfind("fdrill-", 0) != 0) {
    return FailedPrecondition("run_dir_remove " + dir + ": not a run directory (fdrill-*)");
  }
  if (workload_.running())
    return FailedPrecondition("run_dir_remove " + dir + ": the workload still runs");
  tail_.Stop();
  std::error_code ec;
  const auto removed = std::filesystem::remove_all(dir, ec);
  if (ec) return FailedPrecondition("run_dir_remove " + dir + ": " + ec.message());
  return Json{{proto::key::kRemoved, removed}};
}

std::string AgentService::LogTail() const {
  std::ifstream in(config_.state_dir + "/workload.log", std::ios::binary | std::ios::ate);
  if (!in) return "";
  constexpr int64_t kTail = 8192;
  auto size = static_cast<int64_t>(in.tellg());
  int64_t from = std::max<int64_t>(0, size - kTail - 3);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  // From a character boundary (a cut inside one would start the tail with
  // stray continuation bytes); what else is not UTF-8 becomes U+FFFD.
  return ValidUtf8(Utf8Tail(tail, kTail));
}

}  // namespace fdrill
