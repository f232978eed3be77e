#include "harness/controller/workload_supervisor.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "fabric/mpirun.h"
#include "harness/controller/cluster_launch.h"
#include "harness/controller/drill.h"
#include "harness/host/host.h"
#include "harness/wire/protocol.h"
#include "workloads/job_rank.h"

namespace fdrill {

namespace {

// A relaunched job gets this long on top of hang_timeout to start (mpirun,
// wire-up, reading the checkpoint) before its silence counts as a hang.
constexpr auto kLaunchGrace = std::chrono::seconds(10);

// VALUE of the last "KEY: VALUE" line of TEXT (a job's log: "digest: ...",
// "steps_done: ..."), "" when it has none.
std::string LastValueOf(const std::string& text, const std::string& key) {
  const size_t at = ("\n" + text).rfind("\n" + key + ": ");
  if (at == std::string::npos) return "";
  const size_t from = at + key.size() + 2;
  return text.substr(from, text.find_first_of("\r\n", from) - from);
}

}  // namespace

std::vector<const AgentFacts*> WorkloadSupervisor::Nodes() const {
  std::vector<const AgentFacts*> out;
  for (const auto& name : w_.nodes) out.push_back(&agents_.Facts(name));
  return out;
}

bool WorkloadSupervisor::Has(const std::string& node) const {
  return std::find(w_.nodes.begin(), w_.nodes.end(), node) != w_.nodes.end();
}

std::string WorkloadSupervisor::RunDirName() const {
  return "fdrill-" + run_id_ + (w_.name.empty() ? "" : "-" + w_.name);
}

// Emulated: under the node's TMPDIR. A hosts or Slurm fabric: /tmp, one
// directory per host ("fdrill-<run>.<hostname>"; the ranks expand {host} to
// the same gethostname()), so nodes that share a /tmp (emulated nodes under
// real sshd or slurmd, a cluster's shared /tmp) never read each other's.
std::string WorkloadSupervisor::RunDir(const AgentFacts& n) const {
  if (s_.Emulated()) return n.tmpdir + "/" + RunDirName();
  return "/tmp/" + RunDirName() + "." + (n.hostname.empty() ? n.name : n.hostname);
}

int WorkloadSupervisor::ReportingRanks() const {
  // A job's step lines: every rank may print them (Megatron-LM's last
  // rank only, the Hugging Face Trainer's first): one is enough to start.
  if (w_.output == "nccl-tests" || w_.Steps()) return 1;
  if (w_.output == "none") return 0;
  return static_cast<int>(w_.nodes.size()) * w_.ranks_per_node;
}

std::string WorkloadSupervisor::StartNode() const {
  return s_.Emulated() ? Lead().name : std::string("controller");
}

std::string WorkloadSupervisor::MetricsPath() const {
  return s_.Emulated() ? "{tmpdir}/" + RunDirName() + "/rank-{rank}.jsonl"
                       : "/tmp/" + RunDirName() + ".{host}/rank-{rank}.jsonl";
}

std::string WorkloadSupervisor::MasterAddr() const {
  if (s_.Emulated()) {
    for (const auto& node : fabric_.nodes) {
      if (node.name == Lead().name) return node.FabricIp();
    }
  }
  return Lead().hostname.empty() ? Lead().name : Lead().hostname;
}

std::vector<std::string> WorkloadSupervisor::JobCommand() const {
  // The rails, as Open MPI's btl_tcp_if_include keeps fdrill-collective on
  // them (fabric/mpirun.h); a real cluster's job picks its own.
  const std::string ifnames =
      s_.Emulated() ? RailInterfaces(static_cast<int>(fabric_.RailSubnets().size())) : "";
  // Each rank under `fdrill job-rank`: its framework's variables, its step
  // lines as metrics records beside fdrill-collective's (agents stream them).
  return JobRankArgv(w_, opt_.bin_dir + "/fdrill",
                     {RunDir(Lead()) + "/checkpoint", MetricsPath(), MasterAddr(), kMasterPort,
                      ifnames, s_.Emulated() ? kEmulatedJobNice : 0});
}

std::vector<std::string> WorkloadSupervisor::Collective() const {
  if (w_.External()) return JobCommand();
  const std::string node0_dir = RunDir(Lead());
  std::vector<std::string> argv = {opt_.bin_dir + "/fdrill-collective"};
  if (w_.Train()) {
    // Rank 0 (on n0, first in the hostfile) reads and writes the checkpoint;
    // a relaunch runs the same command and resumes from it.
    argv.insert(argv.end(), {"--train", "--steps", std::to_string(w_.steps), "--checkpoint-every",
                             std::to_string(w_.checkpoint_every), "--checkpoint-dir",
                             node0_dir + "/checkpoint"});
  } else {
    auto total =
        std::chrono::duration_cast<std::chrono::seconds>(s_.TotalDuration() + opt_.start_timeout);
    argv.insert(argv.end(), {"--op", w_.op, "--dtype", w_.dtype, "-w", std::to_string(w_.warmup),
                             "--duration", std::to_string(total.count()) + "s"});
    if (w_.Reduces()) argv.insert(argv.end(), {"--redop", w_.redop});
    if (w_.lineup != "barrier") argv.insert(argv.end(), {"--lineup", w_.lineup});
  }
  argv.insert(argv.end(), {"-b", std::to_string(w_.size_bytes), "--jsonl", MetricsPath(),
                           "--stop-file", node0_dir + "/stop", "--backend", w_.backend});
  return argv;
}

void WorkloadSupervisor::FeedMonitorLocked(int64_t offset_ns, const Json& records,
                                           const std::string& from_node) {
  if (state_.monitors.size() <= index_) return;
  ++state_.records_arrived;
  for (const auto& r : records) {
    if (!r.contains("iter") || !r.contains("rank") || !r.contains("wall_ns")) continue;
    LiveSample x;
    x.iter = r.value("iter", int64_t{0});
    x.rank = r.value("rank", 0);
    x.end = Duration(r.value("wall_ns", int64_t{0}) - offset_ns - state_.t0_wall_ns);
    x.time_ms = r.value("time_ms", 0.0);
    x.wait_ms = r.value("wait_ms", 0.0);
    x.bytes = r.value("bytes", 0.0);
    const double alg = r.value("algbw_gbps", 0.0);
    x.bus_factor = alg > 0 ? r.value("busbw_gbps", 0.0) / alg : 1.0;
    x.wrong = r.value("wrong", int64_t{0});
    monitor().Add(x);
    // The drill's (first) workload is what the live culprit reads.
    if (index_ == 0) {
      const std::string node =
          r.value("node", from_node.empty() ? r.value("host", std::string()) : from_node);
      state_.localiser.OnRecord(node, x.rank, attempt_, x.iter, ToSeconds(x.end), x.time_ms,
                                x.wait_ms);
    }
  }
}

void WorkloadSupervisor::OnMetrics(const AgentFacts& n, const Json& records) {
  std::lock_guard<std::mutex> lock(state_.mu);
  events_.Metrics(n.name, w_.name, records, n.offset_ns, attempt_);
  for (const auto& r : records) {
    if (r.contains("rank")) ranks_seen_.insert(r["rank"].get<int>());
  }
  if (awaiting_first_ && events_.attached() && !records.empty()) {
    // The relaunched job's first record: it is running again, from here.
    int64_t resumed = INT64_MAX;
    for (const auto& r : records) resumed = std::min(resumed, r.value("iter", INT64_MAX));
    awaiting_first_ = false;
    events_.Resumed(restarts_, attempt_, resumed, std::max<int64_t>(0, lost_from_ + 1 - resumed));
  }
  FeedMonitorLocked(n.offset_ns, records, n.name);
  state_.cv.notify_all();
}

void WorkloadSupervisor::OnExit(const std::string& node, int code, const std::string& log_tail) {
  if (stopping_) {
    events_.WorkloadKilled(node, code);
    events_.WorkloadLog(w_.name, log_tail);
  } else {
    events_.WorkloadExited(node, w_.name, code, log_tail);
  }
  std::lock_guard<std::mutex> lock(state_.mu);
  workload_exit_ = code;
  last_log_tail_ = log_tail;
  state_.cv.notify_all();
}

void WorkloadSupervisor::OnJobLine(const std::string& line) {
  if (step_reader_) {
    OnJobStepLine(line);
    return;
  }
  if (w_.output != "nccl-tests") return;
  const size_t failures_before = nccl_parser_.failures.size();
  const auto rows = nccl_parser_.Feed(line + "\n");
  // nccl-tests' own failure reports ("Test NCCL failure common.cu:..."):
  // errors of the run, which stop conditions (max_errors) count.
  for (size_t i = failures_before; i < nccl_parser_.failures.size(); ++i) {
    events_.Error("controller", "nccl-tests: " + nccl_parser_.failures[i]);
    std::lock_guard<std::mutex> lock(state_.mu);
    if (state_.monitors.size() > index_) monitor().AddError();
  }
  if (rows.empty()) return;
  Json records = Json::array();
  const int64_t now = clock_.WallNanos();
  std::lock_guard<std::mutex> lock(state_.mu);
  // One record per row: nccl-tests' time is the mean over its -n iterations;
  // out-of-place unless it printed in-place only.
  for (const auto& row : rows) {
    records.push_back(ToMetricsRecord(row, external_iter_++, now, !row.has_oop));
  }
  events_.Metrics(Lead().name, w_.name, records, 0, attempt_);
  ranks_seen_.insert(0);
  FeedMonitorLocked(0, records, "");
  state_.cv.notify_all();
}

void WorkloadSupervisor::OnJobStepLine(const std::string& line) {
  const int64_t now = clock_.WallNanos();
  Json records = Json::array();
  std::lock_guard<std::mutex> lock(state_.mu);
  for (const StepRecord& s : step_reader_->Feed(line, static_cast<double>(now) / 1e9)) {
    const int64_t covered =
        last_job_step_ && s.step > *last_job_step_ ? s.step - *last_job_step_ : 1;
    last_job_step_ = s.step;
    records.push_back(StepMetricsJson(
        s, covered, {.rank = 0, .nranks = 1, .wall_ns = now, .restarted = attempt_ > 0}));
  }
  if (records.empty()) return;
  events_.Metrics(Lead().name, w_.name, records, 0, attempt_);
  ranks_seen_.insert(0);
  FeedMonitorLocked(0, records, "");
  state_.cv.notify_all();
}

Status WorkloadSupervisor::Launch(const std::vector<std::string>& argv) {
  if (s_.Emulated()) {
    // n0's agent already watches its run directory (Start); asking again
    // would make it read the ranks' files from their start.
    auto r =
        agents_.Call(Lead().name, proto::kWorkloadStart, {{proto::key::kArgv, argv}}, kCallTimeout);
    return r.ok() ? Status::Ok() : r.status();
  }
  if (w_.Steps() && !w_.WrapsRanks()) {
    // Made when the scenario loaded: it compiles.
    auto reader = StepLineReader::Make(w_.metrics_preset, w_.metrics_pattern);
    if (!reader.ok()) return reader.status();
    std::lock_guard<std::mutex> lock(state_.mu);
    step_reader_ = std::move(*reader);
    last_job_step_.reset();
  }
  if (!job_) {
    job_ = std::make_unique<LocalJob>(
        [this](const std::string& line) { OnJobLine(line); },
        [this](int code, const std::string& tail) { OnExit("controller", code, tail); });
  }
  return job_->Start(argv);
}

Status WorkloadSupervisor::Begin() {
  // Every agent watches its node's run directory: the ranks' JSONL (if
  // any), and it samples the node's counters while it watches.
  {
    std::vector<Json> bodies;
    for (const AgentFacts* n : Nodes()) bodies.push_back({{proto::key::kMetricsDir, RunDir(*n)}});
    const auto watching = agents_.CallEachNamed(w_.nodes, "workload_start", bodies, kCallTimeout);
    for (const auto& r : watching) {
      if (!r.ok()) return r.status();
    }
  }
  std::vector<std::string> argv;
  if (w_.External()) nccl_parser_ = NcclTestsParser(w_.command.front());
  const std::string dir = events_.dir();
  if (s_.Emulated()) {
    // The tenant's nodes only: its mpirun places ranks on them.
    FabricState used = fabric_;
    used.nodes.clear();
    for (const auto& node : fabric_.nodes) {
      if (Has(node.name)) used.nodes.push_back(node);
    }
    const std::string name = w_.name.empty() ? "hostfile" : "hostfile-" + w_.name;
    std::string hostfile = dir + "/" + name;
    if (auto st = events_.WriteFile(name, MpirunHostfile(used, w_.ranks_per_node)); !st.ok()) {
      return st;
    }
    argv = MpirunArgv(used, w_.ranks_per_node, opt_.bin_dir + "/fdrill", Collective(), hostfile);
  } else {
    if (auto st = events_.WriteFile("hostfile", ClusterHostfile(s_)); !st.ok()) return st;
    argv =
        ClusterLaunchArgv(s_, Collective(), std::filesystem::absolute(dir + "/hostfile").string());
  }
  launch_argv_ = argv;
  events_.WorkloadStart(StartNode(), w_.name, argv);
  if (auto st = Launch(argv); !st.ok()) return st;
  started_ = true;
  return Status::Ok();
}

Status WorkloadSupervisor::Start() {
  if (auto st = Begin(); !st.ok()) return st;
  size_t want = static_cast<size_t>(ReportingRanks());
  auto deadline = clock_.Now() + opt_.start_timeout;
  // A job's step lines: the first within the start timeout (fdrill run
  // makes it 30 s for such a job unless told), or the pattern is not the
  // job's (a wrong preset, a trainer that logs elsewhere).
  const auto steps_deadline = clock_.Now() + opt_.start_timeout;
  std::unique_lock<std::mutex> lock(state_.mu);
  while (ranks_seen_.size() < want) {
    if (workload_exit_) {
      return FailedPrecondition("the workload exited with status " +
                                std::to_string(*workload_exit_) +
                                " before every rank reported; see " + events_.dir() + "/" +
                                DrillEvents::LogName(w_.name));
    }
    if (state_.Aborted()) return FailedPrecondition("aborted while the workload was starting");
    if (w_.Steps() && clock_.Now() > steps_deadline) {
      lock.unlock();
      return NoStepLine();
    }
    if (clock_.Now() > deadline) {
      return DeadlineExceeded(std::to_string(ranks_seen_.size()) + " of " + std::to_string(want) +
                              " ranks reported within " + FormatDuration(opt_.start_timeout));
    }
    state_.cv.wait_for(lock, std::chrono::milliseconds(100));
  }
  return Status::Ok();
}

std::string WorkloadSupervisor::KillJob() {
  std::string tail;
  if (s_.Emulated()) {
    const AgentFacts& n0 = Lead();
    auto r = agents_.Call(n0.name, proto::kWorkloadStop, {{proto::key::kKill, true}},
                          std::chrono::seconds(15));
    if (r.ok()) {
      if ((*r)[proto::key::kExitCode].is_number())
        events_.WorkloadKilled(n0.name, (*r)[proto::key::kExitCode]);
      tail = r->value(proto::key::kLogTail, "");
    }
  }
  (void)StopRemains();
  return tail;
}

Status WorkloadSupervisor::NoStepLine() {
  // Its log: stop it (the agents kill what is left) and keep what it said.
  std::string tail = KillJob();
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    if (tail.empty()) tail = last_log_tail_;
    workload_exit_ = -1;  // ended here: Stop() has nothing left to do
  }
  events_.WorkloadLog(w_.name, tail);
  // Its last lines, as the operator would look at them.
  std::vector<std::string> lines;
  for (size_t end = tail.size(); end > 0 && lines.size() < 5;) {
    while (end > 0 && tail[end - 1] == '\n') --end;
    if (end == 0) break;
    const size_t from = tail.rfind('\n', end - 1);
    const size_t begin = from == std::string::npos ? 0 : from + 1;
    lines.insert(lines.begin(), tail.substr(begin, end - begin));
    end = begin;
  }
  std::string last;
  for (const auto& l : lines) last += "\n    " + l.substr(0, 300);
  const std::string what = w_.metrics_file             ? std::string("its $FDRILL_METRICS file")
                           : w_.metrics_preset.empty() ? w_.metrics_pattern
                                                       : "preset " + w_.metrics_preset;
  return FailedPrecondition(fmt::format(
      "no step line matched {} in the first {} of {} (workload.metrics is not what this job "
      "prints, or it had not reached its first step: --start-timeout gives it longer); its last "
      "lines:{}",
      what, FormatDuration(opt_.start_timeout), DrillEvents::LogName(w_.name),
      last.empty() ? " (none)" : last));
}

WorkloadSupervisor::Health WorkloadSupervisor::HealthLocked(Duration now) const {
  Health h;
  h.exit_code = workload_exit_;
  const auto& policy = w_.restart;
  if (!h.exit_code && !relaunch_at_ && policy.hang_timeout) {
    const Duration limit =
        *policy.hang_timeout + (monitor().AttemptReported() ? Duration{} : Duration(kLaunchGrace));
    if (monitor().QuietFor(now) > limit) {
      h.hang = fmt::format("no {} completed for {:.1f} s (hang_timeout {})",
                           w_.Steps() ? "step" : "iteration", ToSeconds(monitor().QuietFor(now)),
                           FormatDuration(*policy.hang_timeout));
    }
  }
  return h;
}

std::optional<std::string> WorkloadSupervisor::Supervise(Duration now, const Health& health) {
  std::optional<std::string> job_end;
  if (health.hang) {
    // A hung job is a failed one: stop what is left of it (the launcher,
    // and through it every rank), then the policy decides.
    events_.WorkloadHung(*health.hang);
    const int code = StopRemains();
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      workload_exit_ = code;  // it has exited (a relaunch clears this)
    }
    job_end = OnJobFailure(now, code, true);
  } else if (health.exit_code) {
    if (w_.Train() && *health.exit_code == 0) {
      job_end = "the job finished its " + std::to_string(w_.steps) + " steps";
    } else if (w_.Steps() && *health.exit_code == 0) {
      job_end = "the job finished (exit 0)";
    } else {
      // The job ended before the drill did (a killed rank, a collective
      // error): a result of the drill, not a failure of the harness.
      events_.WorkloadFailed(*health.exit_code);
      (void)StopRemains();
      job_end = OnJobFailure(now, *health.exit_code, false);
    }
  }
  bool relaunch = false;
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    relaunch = relaunch_at_ && now >= *relaunch_at_;
  }
  if (relaunch && !job_end) Relaunch(now);
  return job_end;
}

std::optional<std::string> WorkloadSupervisor::OnJobFailure(Duration now, int code, bool hang) {
  const RestartSpec& policy = w_.restart;
  std::lock_guard<std::mutex> lock(state_.mu);
  if (restarts_ < policy.max_restarts) {
    // backoff, 2 x backoff, 4 x backoff, ... up to 5 minutes (or backoff, if longer).
    const Duration cap = std::max<Duration>(policy.backoff, std::chrono::minutes(5));
    Duration wait = policy.backoff;
    for (int k = 0; k < restarts_ && wait < cap; ++k) wait = std::min<Duration>(wait * 2, cap);
    ++restarts_;
    relaunch_at_ = now + wait;
    workload_exit_.reset();
    lost_from_ = monitor().last_complete_iter();
    events_.RelaunchScheduled(restarts_, wait, lost_from_);
    return std::nullopt;
  }
  const std::string what = hang ? "hung" : "exited with code " + std::to_string(code);
  if (policy.max_restarts == 0) return "the workload " + what + " during the drill";
  return "the job failed " + std::to_string(restarts_ + 1) + " times (last: it " + what +
         "); restarts exhausted (max_restarts " + std::to_string(policy.max_restarts) + ")";
}

int WorkloadSupervisor::StopRemains() {
  int code = -1;
  if (job_ && job_->running()) {
    // The launcher on this host first: mpirun/srun take their ranks down.
    code = job_->Stop(std::chrono::seconds(5));
    events_.WorkloadKilled("controller", code);
  }
  for (const AgentFacts* np : Nodes()) {
    const AgentFacts& n = *np;
    auto r = agents_.Call(n.name, proto::kWorkloadStop, {{proto::key::kKill, true}},
                          std::chrono::seconds(15));
    if (!r.ok()) {
      events_.Error(n.name, "stopping the failed job: " + r.status().message());
      continue;
    }
    if ((*r)[proto::key::kExitCode].is_number()) {
      code = (*r)[proto::key::kExitCode].get<int>();
      events_.WorkloadKilled(n.name, code);
    }
    if (r->value(proto::key::kRanksKilled, 0) > 0)
      events_.RanksKilled(n.name, r->value(proto::key::kRanksKilled, 0));
  }
  return code;
}

void WorkloadSupervisor::Relaunch(Duration now) {
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    relaunch_at_.reset();
    ++attempt_;
    awaiting_first_ = true;
    monitor().NewAttempt(now);
  }
  events_.WorkloadRestart(StartNode(), launch_argv_, attempt_);
  if (auto st = Launch(launch_argv_); !st.ok()) {
    events_.Error(Lead().name, "relaunch: " + st.message());
    state_.failed = true;
  }
}

void WorkloadSupervisor::Stop() {
  if (!started_) return;  // a late tenant whose phase never came
  stopping_ = true;
  bool exited = false;
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    exited = workload_exit_.has_value();
  }
  const AgentFacts& n0 = Lead();
  if (!exited && !w_.External()) {
    // fdrill-collective stops by itself at the stop file (rank 0 reads it on node 0).
    (void)agents_.Call(n0.name, proto::kWorkloadStop,
                       {{proto::key::kStopFile, RunDir(n0) + "/stop"}}, kCallTimeout);
    std::unique_lock<std::mutex> lock(state_.mu);
    state_.cv.wait_for(lock, std::chrono::seconds(20),
                       [this] { return workload_exit_.has_value(); });
    exited = workload_exit_.has_value();
  }
  if (!exited && w_.External() && s_.Emulated()) {
    // A job of the operator's own has no stop file, and n0's agent must not
    // wait out mpirun's SIGTERM grace (up to 5 s) inside its loop, where its
    // lease renewals would lapse: the launcher and every rank are killed on
    // every node at once, n0's log kept.
    if (const std::string tail = KillJob(); !tail.empty()) events_.WorkloadLog(w_.name, tail);
    exited = true;
  }
  if (!exited && job_) {
    // A real cluster's launcher: SIGTERM to its group (mpirun/srun end
    // their ranks), SIGKILL after 10 s; then every agent kills what is left.
    const int code = job_->Stop(std::chrono::seconds(10));
    bool reported = false;  // by OnExit, from the launcher's reader, as forced
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      reported = workload_exit_.has_value();
    }
    if (!reported) events_.WorkloadKilled("controller", code);
    exited = true;
    (void)StopRemains();
  }
  if (!exited) {
    auto r = agents_.Call(n0.name, proto::kWorkloadStop, {}, std::chrono::seconds(15));
    if (r.ok() && (*r)[proto::key::kExitCode].is_number()) {
      events_.WorkloadKilled(n0.name, (*r)[proto::key::kExitCode]);
      events_.WorkloadLog(w_.name, r->value(proto::key::kLogTail, ""));
    }
  }
}

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

void WorkloadSupervisor::RemoveRunDirs() {
  std::vector<Json> bodies;
  for (const AgentFacts* n : Nodes()) bodies.push_back({{proto::key::kDir, RunDir(*n)}});
  const auto removed = agents_.CallEachNamed(w_.nodes, "run_dir_remove", bodies, kCallTimeout);
  for (size_t i = 0; i < removed.size(); ++i) {
    if (!removed[i].ok()) events_.RunDirKept(w_.nodes[i], removed[i].status().message());
  }
}

}  // namespace fdrill
