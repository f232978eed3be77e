// The workload supervisor (workload_supervisor.h): launching the job on
// the fabric or from this host, its records into the live view, and its
// end. The restart policy is in workload_restart.cc, the digest checks in
// workload_digest.cc.
#include "harness/controller/workload_supervisor.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "common/wire/protocol.h"
#include "fabric/mpirun.h"
#include "harness/controller/cluster_launch.h"
#include "harness/controller/drill.h"
#include "workloads/job_rank.h"

namespace fdrill {

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
    if (const DrillTarget* node = targets_.FindNode(Lead().name)) return node->fabric_ip;
  }
  return Lead().hostname.empty() ? Lead().name : Lead().hostname;
}

std::vector<std::string> WorkloadSupervisor::JobCommand() const {
  // The rails, as Open MPI's btl_tcp_if_include keeps fdrill-collective on
  // them (fabric/mpirun.h); a real cluster's job picks its own.
  const std::string ifnames =
      s_.Emulated() ? RailInterfaces(static_cast<int>(targets_.rail_subnets.size())) : "";
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
    // The tenant's nodes only, in the fabric's order: its mpirun places
    // ranks on them.
    std::vector<std::string> used;
    for (const DrillTarget& node : targets_.nodes) {
      if (Has(node.name)) used.push_back(node.fabric_ip);
    }
    const std::string name = w_.name.empty() ? "hostfile" : "hostfile-" + w_.name;
    std::string hostfile = dir + "/" + name;
    if (auto st = events_.WriteFile(name, MpirunHostfile(used, w_.ranks_per_node)); !st.ok()) {
      return st;
    }
    argv = MpirunArgv(used.size(), targets_.rail_subnets, w_.ranks_per_node,
                      opt_.bin_dir + "/fdrill", Collective(), hostfile);
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

void WorkloadSupervisor::RemoveRunDirs() {
  std::vector<Json> bodies;
  for (const AgentFacts* n : Nodes()) bodies.push_back({{proto::key::kDir, RunDir(*n)}});
  const auto removed = agents_.CallEachNamed(w_.nodes, "run_dir_remove", bodies, kCallTimeout);
  for (size_t i = 0; i < removed.size(); ++i) {
    if (!removed[i].ok()) events_.RunDirKept(w_.nodes[i], removed[i].status().message());
  }
}

}  // namespace fdrill
