#include "harness/controller/drill.h"

#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "fabric/mpirun.h"
#include "harness/controller/agent_link.h"
#include "harness/controller/agent_set.h"
#include "harness/controller/recorder.h"
#include "harness/controller/engine.h"
#include "harness/controller/live_monitor.h"
#include "harness/core/log.h"
#include "harness/host/real_process_runner.h"
#include "harness/tls/certs.h"
#include "harness/controller/cluster_launch.h"
#include "harness/controller/local_job.h"
#include "workloads/nccl_tests_output.h"

#include <fmt/format.h>

namespace fdrill {

namespace {

constexpr auto kCallTimeout = std::chrono::seconds(10);

Json MetricLimitsJson(const std::vector<MetricLimit>& limits) {
  Json out = Json::array();
  for (const auto& m : limits) {
    Json j = {{"metric", m.metric}};
    if (!m.fault.empty()) j["fault"] = m.fault;
    if (m.max) j["max"] = *m.max;
    if (m.min) j["min"] = *m.min;
    out.push_back(std::move(j));
  }
  return out;
}

Json StopJson(const StopSpec& stop) {
  Json j = Json::object();
  if (stop.min_busbw_gbps) {
    j["min_busbw_gbps"] = *stop.min_busbw_gbps;
    j["for_iterations"] = stop.for_iterations;
  }
  if (stop.max_iteration_time) j["max_iteration_time_s"] = ToSeconds(*stop.max_iteration_time);
  if (stop.max_wrong_elements) j["max_wrong_elements"] = *stop.max_wrong_elements;
  if (stop.max_errors) j["max_errors"] = *stop.max_errors;
  return j;
}

struct NodeLink {
  std::string name;      // the node's name in the drill (n0, gpu01)
  std::string address;   // where its agent listens
  uint16_t port = 0;
  std::unique_ptr<AgentLink> link;
  int64_t offset_ns = 0;   // agent wall clock minus controller wall clock
  std::string tmpdir;
  Json snapshot;
};

class DrillRun {
 public:
  DrillRun(const Scenario& s, const FabricState& f, const DrillOptions& o) : s_(s), fabric_(f), opt_(o) {}
  ~DrillRun() { Shutdown(); }

  Status Run();

 private:
  Status Connect();
  Status CheckFaults();
  Status StartWorkload();
  Status WalkTimeline();
  // Carries out one engine action; false when the drill must end (an apply or
  // revert failed: Cleanup reverts the rest).
  bool Execute(const Action& a);
  // The job failed (code) or hung: schedule a relaunch if the policy allows,
  // else the reason the drill ends with.
  std::optional<std::string> OnJobFailure(Duration now, int code, bool hang);
  void Relaunch(Duration now);
  // The agents kill what is left of a failed job (its launcher and every
  // rank on their node); the launcher's exit code, or -1.
  int StopRemains();
  // --train: the job's final digest against fdrill-train-ref's.
  void CheckDigest();
  void FeedMonitor(const NodeLink& n, const Json& records);
  void Cleanup();
  void Shutdown();
  void OnPush(NodeLink& n, const Json& msg);
  bool Aborted() const { return (opt_.abort && opt_.abort->load()) || failed_.load(); }
  void LeaseLoop();
  // `type` to every agent in parallel; one result per node, in order.
  std::vector<Result<Json>> CallEach(const std::string& type, const Json& body, Duration timeout);
  // ... with a body per node.
  std::vector<Result<Json>> CallEachWith(const std::string& type, const std::vector<Json>& bodies, Duration timeout);
  std::vector<std::string> Collective() const;
  // Where node n's ranks write their JSONL and its agent reads it: under the
  // node's TMPDIR on the emulated fabric, /tmp on a real one (the ranks run
  // as the operator, the agent as root: /tmp is what both have).
  std::string RunDir(const NodeLink& n) const;
  // How many ranks report iterations: every rank (fdrill-collective), one
  // (nccl-tests prints one table), none (a command with output none).
  int ReportingRanks() const;
  // A real cluster's job runs on this host (LocalJob): its output lines and exit.
  void OnJobLine(const std::string& line);
  void OnJobExit(int code, const std::string& tail);
  Status Launch(const std::vector<std::string>& argv);

  const Scenario& s_;
  const FabricState& fabric_;
  const DrillOptions& opt_;
  RealClock clock_;
  boost::asio::io_context io_;
  std::unique_ptr<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread io_thread_;
  std::thread lease_thread_;
  std::vector<NodeLink> nodes_;
  std::unique_ptr<RunRecorder> rec_;
  // rec_ as seen from the io and lease threads: null until it exists.
  std::atomic<RunRecorder*> live_rec_{nullptr};
  std::string run_id_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::set<int> ranks_seen_;
  std::optional<int> workload_exit_;
  std::atomic<bool> failed_{false};
  bool job_ended_ = false;  // the workload exited before the timeline ended
  bool stopped_ = false;    // a stop condition or a gate's timeout ended the timeline
  std::atomic<bool> closing_{false};
  std::string failure_;
  std::map<std::string, std::string> applied_;  // fault id -> node, while in force
  // The live view the engine's gates and stop conditions read (guarded by
  // mu_); null until the timeline starts, times relative to t0_wall_ns_.
  std::unique_ptr<LiveMonitor> monitor_;
  int64_t t0_wall_ns_ = 0;
  bool abort_recorded_ = false;
  // Restart policy (workload.restart), guarded by mu_ where the io thread
  // reads it: which launch of the workload runs, how many relaunches so far,
  // whether the latest one has reported, and what the failed one had done.
  int attempt_ = 0;
  int restarts_ = 0;
  bool awaiting_first_ = false;
  int64_t lost_from_ = -1;  // the last step the failed attempt completed
  std::optional<Duration> relaunch_at_;
  std::vector<std::string> launch_argv_;
  std::string last_log_tail_;
  // Faults applied whose impact the live view has not shown yet: id -> when
  // it was applied (timeline time). The controller thread only.
  std::map<std::string, Duration> awaiting_impact_;
  // Real clusters: the launcher on this host, and its output parser.
  std::unique_ptr<LocalJob> job_;
  NcclTestsParser nccl_parser_;
  int64_t external_iter_ = 0;
  std::string current_phase_;  // for the progress line
  // The drill's length (at most, when gated): fixed, so not re-summed over
  // every phase at each 20 ms turn of the timeline loop.
  const Duration total_ = s_.TotalDuration();
  const bool gated_ = std::any_of(s_.phases.begin(), s_.phases.end(), [](const PhaseSpec& p) { return p.gate.has_value(); });
  void ShowProgress(Duration now);
};

// A relaunched job gets this long on top of hang_timeout to start (mpirun,
// wire-up, reading the checkpoint) before its silence counts as a hang.
constexpr auto kLaunchGrace = std::chrono::seconds(10);

void DrillRun::FeedMonitor(const NodeLink& n, const Json& records) {
  if (!monitor_) return;
  for (const auto& r : records) {
    if (!r.contains("iter") || !r.contains("rank") || !r.contains("wall_ns")) continue;
    LiveSample x;
    x.iter = r.value("iter", int64_t{0});
    x.rank = r.value("rank", 0);
    x.end = Duration(r.value("wall_ns", int64_t{0}) - n.offset_ns - t0_wall_ns_);
    x.time_ms = r.value("time_ms", 0.0);
    x.wait_ms = r.value("wait_ms", 0.0);
    x.bytes = r.value("bytes", 0.0);
    const double alg = r.value("algbw_gbps", 0.0);
    x.bus_factor = alg > 0 ? r.value("busbw_gbps", 0.0) / alg : 1.0;
    x.wrong = r.value("wrong", int64_t{0});
    monitor_->Add(x);
  }
}

void DrillRun::OnPush(NodeLink& n, const Json& msg) {
  std::string type = msg.value("type", "");
  RunRecorder* rec = live_rec_.load();
  if (type == "metrics") {
    const Json& records = msg["records"];
    std::lock_guard<std::mutex> lock(mu_);
    if (rec) rec->Metrics(n.name, records, n.offset_ns, attempt_);
    for (const auto& r : records) {
      if (r.contains("rank")) ranks_seen_.insert(r["rank"].get<int>());
    }
    if (awaiting_first_ && rec && !records.empty()) {
      // The relaunched job's first record: it is running again, from here.
      int64_t resumed = INT64_MAX;
      for (const auto& r : records) resumed = std::min(resumed, r.value("iter", INT64_MAX));
      awaiting_first_ = false;
      rec->Event("workload_restart", {{"restart", restarts_},
                                      {"attempt", attempt_},
                                      {"resumed_step", resumed},
                                      {"iterations_lost", std::max<int64_t>(0, lost_from_ + 1 - resumed)}});
    }
    FeedMonitor(n, records);
    cv_.notify_all();
  } else if (type == "counters") {
    if (rec) rec->Event("counters", {{"node", n.name}, {"counters", msg.value("counters", Json::object())}});
  } else if (type == "workload_exit") {
    int code = msg.value("exit_code", -1);
    if (rec) rec->Event("workload_exit", {{"node", n.name}, {"exit_code", code}});
    if (rec) (void)rec->WriteFile("workload.log", msg.value("log_tail", ""));
    std::lock_guard<std::mutex> lock(mu_);
    workload_exit_ = code;
    last_log_tail_ = msg.value("log_tail", "");
    cv_.notify_all();
  } else if (type == "fault_expired") {
    if (rec) {
      rec->Event("error", {{"node", n.name},
                            {"message", "fault " + msg.value("fault_id", "?") + " outlived its max_duration; the agent reverted it"}});
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (monitor_) monitor_->AddError();
  } else if (type == "lease_expired") {
    if (rec) rec->Event("error", {{"node", n.name}, {"message", "the agent's lease lapsed; it reverted"}});
    failed_ = true;
    cv_.notify_all();
  }
}

Status DrillRun::Connect() {
  // The emulated fabric's own pki, or (a real cluster) --tls-dir / /etc/fdrill/pki.
  auto tls = ControllerTls(opt_.tls_dir.empty() && !s_.Emulated() && !opt_.insecure ? kDefaultPkiDir : opt_.tls_dir, opt_.insecure,
                           fabric_.pki_dir);
  if (!tls.ok()) return tls.status();
  work_ = std::make_unique<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>(
      io_.get_executor());
  io_thread_ = std::thread([this] { io_.run(); });
  nodes_.resize(static_cast<size_t>(s_.nodes));
  for (int i = 0; i < s_.nodes; ++i) {
    NodeLink& n = nodes_[static_cast<size_t>(i)];
    if (s_.Emulated()) {
      const FabricNode& fn = fabric_.nodes[static_cast<size_t>(i)];
      n.name = fn.name;
      n.address = fn.MgmtIp();
      n.port = static_cast<uint16_t>(fn.agent_port);
      n.tmpdir = fn.tmpdir;
    } else {
      // A real node: its agent on the host's own name (DNS or /etc/hosts), at fabric.agent_port.
      n.name = s_.host_names[static_cast<size_t>(i)];
      n.address = n.name;
      n.port = static_cast<uint16_t>(s_.agent_port);
      n.tmpdir = "/tmp";
    }
    n.link = std::make_unique<AgentLink>(io_, n.name, n.address, n.port, tls->has_value() ? &**tls : nullptr);
    n.link->set_on_push([this, &n](const Json& m) { OnPush(n, m); });
    n.link->set_on_drop([this, &n](const std::string& why) {
      if (closing_) return;
      if (auto* rec = live_rec_.load()) rec->Event("error", {{"node", n.name}, {"message", "lost the agent: " + why}});
      failed_ = true;
      cv_.notify_all();
    });
    if (auto st = n.link->Connect(opt_.connect_timeout); !st.ok()) return st;
    int64_t before = clock_.WallNanos();
    auto hello = n.link->Call("hello", {}, kCallTimeout);
    int64_t after = clock_.WallNanos();
    if (!hello.ok()) return hello.status();
    if ((*hello)["node"] != n.name) {
      return FailedPrecondition("agent at " + n.link->address() + " says it is " +
                                (*hello)["node"].get<std::string>() + ", expected " + n.name);
    }
    n.offset_ns = (*hello)["wall_ns"].get<int64_t>() - (before + after) / 2;
    n.tmpdir = hello->value("tmpdir", n.tmpdir);
    auto lease = n.link->Call("lease", {{"ttl_ms", std::chrono::duration_cast<std::chrono::milliseconds>(s_.lease_ttl).count()}}, kCallTimeout);
    if (!lease.ok()) return lease.status();
  }
  lease_thread_ = std::thread([this] { LeaseLoop(); });
  return Status::Ok();
}

std::vector<Result<Json>> DrillRun::CallEach(const std::string& type, const Json& body, Duration timeout) {
  return CallEachWith(type, std::vector<Json>(nodes_.size(), body), timeout);
}

std::vector<Result<Json>> DrillRun::CallEachWith(const std::string& type, const std::vector<Json>& bodies, Duration timeout) {
  // Every agent at once (AgentLink::CallAsync), then wait for the answers
  // until the deadline: a round costs the slowest agent, not their sum.
  struct Round {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::optional<Result<Json>>> replies;
    size_t pending = 0;
  };
  auto round = std::make_shared<Round>();
  round->replies.resize(nodes_.size());
  round->pending = nodes_.size();
  std::vector<uint64_t> ids(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    ids[i] = nodes_[i].link->CallAsync(type, bodies[i], [round, i](Result<Json> r) {
      std::lock_guard<std::mutex> lock(round->mu);
      if (round->replies[i]) return;
      round->replies[i] = std::move(r);
      --round->pending;
      round->cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(round->mu);
  round->cv.wait_for(lock, timeout, [&] { return round->pending == 0; });
  std::vector<Result<Json>> out;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (round->replies[i]) {
      out.push_back(std::move(*round->replies[i]));
    } else {
      nodes_[i].link->Forget(ids[i]);
      out.push_back(DeadlineExceeded(type + " to " + nodes_[i].name + ": no answer within " + FormatDuration(timeout)));
    }
  }
  return out;
}

void DrillRun::LeaseLoop() {
  int64_t ttl_ms = std::chrono::duration_cast<std::chrono::milliseconds>(s_.lease_ttl).count();
  std::vector<Clock::TimePoint> last_ok(nodes_.size(), clock_.Now());
  while (!closing_) {
    auto next = clock_.Now() + s_.lease_renew;
    const auto replies = CallEach("lease", {{"ttl_ms", ttl_ms}}, s_.lease_renew);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (closing_) return;
      if (replies[i].ok()) {
        last_ok[i] = clock_.Now();
        continue;
      }
      // One late answer (an agent busy stopping a job) is not a lost lease:
      // the lease still holds until lease_ttl after the last renewal. Once
      // it may lapse before the next try, the agent reverts everything by
      // itself and the drill can no longer say what the fabric did: it ends.
      if (!closing_ && clock_.Now() + s_.lease_renew >= last_ok[i] + s_.lease_ttl) {
        if (auto* rec = live_rec_.load()) {
          rec->Event("error", {{"node", nodes_[i].name}, {"message", "lease renewal failed: " + replies[i].status().message()}});
        }
        failed_ = true;
        cv_.notify_all();
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, next, [this] { return closing_.load(); });
  }
}

Status DrillRun::CheckFaults() {
  std::map<std::string, Json> per_node;
  for (const auto& phase : s_.phases) {
    for (const auto& f : phase.faults) {
      per_node[f.node].push_back({{"id", f.id}, {"kind", f.kind}, {"params", f.params}});
    }
  }
  for (auto& n : nodes_) {
    auto it = per_node.find(n.name);
    if (it == per_node.end()) continue;
    auto r = n.link->Call("check", {{"faults", it->second}}, kCallTimeout);
    if (!r.ok()) return r.status().Annotate(s_.file);
  }
  return Status::Ok();
}

std::string DrillRun::RunDir(const NodeLink& n) const {
  return (s_.Emulated() ? n.tmpdir : std::string("/tmp")) + "/fdrill-" + run_id_;
}

int DrillRun::ReportingRanks() const {
  if (s_.workload.output == "nccl-tests") return 1;
  if (s_.workload.output == "none") return 0;
  return s_.nodes * s_.workload.ranks_per_node;
}

std::vector<std::string> DrillRun::Collective() const {
  if (s_.workload.External()) return s_.workload.command;
  const std::string node0_dir = RunDir(nodes_[0]);
  std::vector<std::string> argv = {opt_.bin_dir + "/fdrill-collective"};
  if (s_.workload.Train()) {
    // Rank 0 (on n0, first in the hostfile) reads and writes the checkpoint;
    // a relaunch runs the same command and resumes from it.
    argv.insert(argv.end(), {"--train", "--steps", std::to_string(s_.workload.steps), "--checkpoint-every",
                             std::to_string(s_.workload.checkpoint_every), "--checkpoint-dir", node0_dir + "/checkpoint"});
  } else {
    auto total = std::chrono::duration_cast<std::chrono::seconds>(s_.TotalDuration() + opt_.start_timeout);
    argv.insert(argv.end(), {"--op", s_.workload.op, "--dtype", s_.workload.dtype, "-w", std::to_string(s_.workload.warmup),
                             "--duration", std::to_string(total.count()) + "s"});
    if (s_.workload.Reduces()) argv.insert(argv.end(), {"--redop", s_.workload.redop});
  }
  argv.insert(argv.end(), {"-b", std::to_string(s_.workload.size_bytes), "--jsonl",
                           (s_.Emulated() ? "{tmpdir}" : "/tmp") + ("/fdrill-" + run_id_ + "/rank-{rank}.jsonl"),
                           "--stop-file", node0_dir + "/stop",
                           "--backend", s_.workload.backend});
  return argv;
}

void DrillRun::OnJobLine(const std::string& line) {
  if (s_.workload.output != "nccl-tests") return;
  const size_t failures_before = nccl_parser_.failures.size();
  const auto rows = nccl_parser_.Feed(line + "\n");
  RunRecorder* rec = live_rec_.load();
  // nccl-tests' own failure reports ("Test NCCL failure common.cu:..."):
  // errors of the run, which stop conditions (max_errors) count.
  for (size_t i = failures_before; i < nccl_parser_.failures.size(); ++i) {
    if (rec) rec->Event("error", {{"node", "controller"}, {"message", "nccl-tests: " + nccl_parser_.failures[i]}});
    std::lock_guard<std::mutex> lock(mu_);
    if (monitor_) monitor_->AddError();
  }
  if (rows.empty()) return;
  Json records = Json::array();
  const int64_t now = clock_.WallNanos();
  std::lock_guard<std::mutex> lock(mu_);
  // One record per row: nccl-tests' time is the mean over its -n iterations;
  // out-of-place unless it printed in-place only.
  for (const auto& row : rows) records.push_back(ToMetricsRecord(row, external_iter_++, now, !row.has_oop));
  if (rec) rec->Metrics(nodes_[0].name, records, 0, attempt_);
  ranks_seen_.insert(0);
  FeedMonitor(NodeLink{}, records);
  cv_.notify_all();
}

void DrillRun::OnJobExit(int code, const std::string& tail) {
  if (RunRecorder* rec = live_rec_.load()) {
    rec->Event("workload_exit", {{"node", "controller"}, {"exit_code", code}});
    (void)rec->WriteFile("workload.log", tail);
  }
  std::lock_guard<std::mutex> lock(mu_);
  workload_exit_ = code;
  last_log_tail_ = tail;
  cv_.notify_all();
}

Status DrillRun::Launch(const std::vector<std::string>& argv) {
  if (s_.Emulated()) {
    // n0's agent already watches its run directory (StartWorkload); asking
    // again would make it read the ranks' files from their start.
    auto r = nodes_[0].link->Call("workload_start", {{"argv", argv}}, kCallTimeout);
    return r.ok() ? Status::Ok() : r.status();
  }
  if (!job_) {
    job_ = std::make_unique<LocalJob>([this](const std::string& line) { OnJobLine(line); },
                                      [this](int code, const std::string& tail) { OnJobExit(code, tail); });
  }
  return job_->Start(argv);
}

Status DrillRun::StartWorkload() {
  // Every agent watches its node's run directory: the ranks' JSONL (if
  // any), and it samples the node's counters while it watches.
  {
    std::vector<Json> bodies;
    for (const auto& n : nodes_) bodies.push_back({{"metrics_dir", RunDir(n)}});
    const auto watching = CallEachWith("workload_start", bodies, kCallTimeout);
    for (const auto& r : watching) {
      if (!r.ok()) return r.status();
    }
  }
  std::vector<std::string> argv;
  if (s_.workload.External()) nccl_parser_ = NcclTestsParser(s_.workload.command.front());
  if (s_.Emulated()) {
    FabricState used = fabric_;
    used.nodes.resize(static_cast<size_t>(s_.nodes));
    std::string hostfile = rec_->dir() + "/hostfile";
    if (auto st = rec_->WriteFile("hostfile", MpirunHostfile(used, s_.workload.ranks_per_node)); !st.ok()) return st;
    argv = MpirunArgv(used, s_.workload.ranks_per_node, opt_.bin_dir + "/fdrill", Collective(), hostfile);
  } else {
    if (auto st = rec_->WriteFile("hostfile", ClusterHostfile(s_)); !st.ok()) return st;
    argv = ClusterLaunchArgv(s_, Collective(), std::filesystem::absolute(rec_->dir() + "/hostfile").string());
  }
  launch_argv_ = argv;
  rec_->Event("workload_start", {{"node", s_.Emulated() ? nodes_[0].name : std::string("controller")}, {"argv", argv}});
  if (auto st = Launch(argv); !st.ok()) return st;
  size_t want = static_cast<size_t>(ReportingRanks());
  auto deadline = clock_.Now() + opt_.start_timeout;
  std::unique_lock<std::mutex> lock(mu_);
  while (ranks_seen_.size() < want) {
    if (workload_exit_) {
      return FailedPrecondition("the workload exited with status " + std::to_string(*workload_exit_) +
                                " before every rank reported; see " + rec_->dir() + "/workload.log");
    }
    if (Aborted()) return FailedPrecondition("aborted while the workload was starting");
    if (clock_.Now() > deadline) {
      return DeadlineExceeded(std::to_string(ranks_seen_.size()) + " of " + std::to_string(want) +
                              " ranks reported within " + FormatDuration(opt_.start_timeout));
    }
    cv_.wait_for(lock, std::chrono::milliseconds(100));
  }
  return Status::Ok();
}

bool DrillRun::Execute(const Action& a) {
  const PhaseSpec* phase = a.phase >= 0 ? &s_.phases[static_cast<size_t>(a.phase)] : nullptr;
  switch (a.kind) {
    case Action::kPhaseStart:
      current_phase_ = phase->name;
      [[fallthrough]];
    case Action::kPhaseEnd:
      rec_->Event(ActionKindName(a.kind), {{"phase", phase->name}, {"reason", a.reason}});
      return true;
    case Action::kDone:
      return true;
    case Action::kAbort:
      return true;  // the caller records it with its cause
    case Action::kApply:
    case Action::kRevert:
      break;
  }
  const FaultSpec& f = phase->faults[static_cast<size_t>(a.fault)];
  NodeLink& n = *std::find_if(nodes_.begin(), nodes_.end(), [&](const NodeLink& x) { return x.name == f.node; });
  std::string target = f.params.value("interface", "");
  if (a.kind == Action::kApply) {
    // Journalled before it is applied: fault_apply, then the call.
    rec_->Event("fault_apply", {{"id", f.id}, {"kind", f.kind}, {"node", f.node}, {"target", target},
                                {"params", f.params}, {"reason", a.reason}});
    {
      std::lock_guard<std::mutex> lock(mu_);
      applied_[f.id] = f.node;  // in force as soon as it may be: Cleanup reverts it
    }
    auto max_ms = std::chrono::duration_cast<std::chrono::milliseconds>(f.max_duration).count();
    auto r = n.link->Call("apply", {{"fault_id", f.id}, {"kind", f.kind}, {"params", f.params},
                                    {"max_duration_ms", max_ms}}, kCallTimeout);
    if (!r.ok()) {
      rec_->Event("error", {{"node", f.node}, {"message", "apply " + f.id + ": " + r.status().message()}});
      failed_ = true;
      return false;
    }
    rec_->Event("fault_applied", {{"id", f.id}, {"kind", f.kind}, {"node", f.node}, {"target", target},
                                  {"verified", r->value("verified", false)}});
    awaiting_impact_[f.id] = a.at;
    return true;
  }
  rec_->Event("fault_revert", {{"id", f.id}, {"node", f.node}, {"reason", a.reason}});
  auto r = n.link->Call("revert", {{"fault_id", f.id}}, kCallTimeout);
  if (!r.ok()) {
    rec_->Event("error", {{"node", f.node}, {"message", "revert " + f.id + ": " + r.status().message()}});
    failed_ = true;
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    applied_.erase(f.id);
  }
  rec_->Event("fault_reverted", {{"id", f.id}, {"node", f.node}, {"verified", r->value("verified", false)}});
  return true;
}

std::optional<std::string> DrillRun::OnJobFailure(Duration now, int code, bool hang) {
  const RestartSpec& policy = s_.workload.restart;
  std::lock_guard<std::mutex> lock(mu_);
  if (restarts_ < policy.max_restarts) {
    // backoff, 2 x backoff, 4 x backoff, ... up to 5 minutes (or backoff, if longer).
    const Duration cap = std::max<Duration>(policy.backoff, std::chrono::minutes(5));
    Duration wait = policy.backoff;
    for (int k = 0; k < restarts_ && wait < cap; ++k) wait = std::min<Duration>(wait * 2, cap);
    ++restarts_;
    relaunch_at_ = now + wait;
    workload_exit_.reset();
    lost_from_ = monitor_->last_complete_iter();
    rec_->Event("workload_relaunch_scheduled", {{"restart", restarts_}, {"in_s", ToSeconds(wait)},
                                                {"last_step", lost_from_}});
    return std::nullopt;
  }
  const std::string what = hang ? "hung" : "exited with code " + std::to_string(code);
  if (policy.max_restarts == 0) return "the workload " + what + " during the drill";
  return "the job failed " + std::to_string(restarts_ + 1) + " times (last: it " + what + "); restarts exhausted (max_restarts " +
         std::to_string(policy.max_restarts) + ")";
}

int DrillRun::StopRemains() {
  int code = -1;
  if (job_ && job_->running()) {
    // The launcher on this host first: mpirun/srun take their ranks down.
    code = job_->Stop(std::chrono::seconds(5));
    rec_->Event("workload_exit", {{"node", "controller"}, {"exit_code", code}, {"forced", true}});
  }
  for (auto& n : nodes_) {
    auto r = n.link->Call("workload_stop", {{"kill", true}}, std::chrono::seconds(15));
    if (!r.ok()) {
      rec_->Event("error", {{"node", n.name}, {"message", "stopping the failed job: " + r.status().message()}});
      continue;
    }
    if ((*r)["exit_code"].is_number()) {
      code = (*r)["exit_code"].get<int>();
      rec_->Event("workload_exit", {{"node", n.name}, {"exit_code", code}, {"forced", true}});
    }
    if (r->value("ranks_killed", 0) > 0) {
      rec_->Event("ranks_killed", {{"node", n.name}, {"count", r->value("ranks_killed", 0)}});
    }
  }
  return code;
}

void DrillRun::Relaunch(Duration now) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    relaunch_at_.reset();
    ++attempt_;
    awaiting_first_ = true;
    monitor_->NewAttempt(now);
  }
  rec_->Event("workload_start", {{"node", s_.Emulated() ? nodes_[0].name : std::string("controller")},
                                  {"argv", launch_argv_}, {"attempt", attempt_}});
  if (auto st = Launch(launch_argv_); !st.ok()) {
    rec_->Event("error", {{"node", nodes_[0].name}, {"message", "relaunch: " + st.message()}});
    failed_ = true;
  }
}

void DrillRun::CheckDigest() {
  std::string tail;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tail = last_log_tail_;
  }
  // "digest: <hex>" and "steps_done: N", as fdrill-collective --train prints them.
  auto value_of = [&](const std::string& key) -> std::string {
    const size_t at = tail.rfind("\n" + key + ": ");
    if (at == std::string::npos) return "";
    const size_t from = at + key.size() + 3;
    return tail.substr(from, tail.find('\n', from) - from);
  };
  const std::string digest = value_of("digest");
  const std::string steps = value_of("steps_done");
  if (digest.empty() || steps.empty()) {
    rec_->Event("digest_check", {{"digest", nullptr}, {"reason", "the job printed no final digest (it did not end cleanly)"}});
    return;
  }
  RealProcessRunner runner;
  const std::vector<std::string> argv = {opt_.bin_dir + "/fdrill-train-ref", "--nranks",
                                         std::to_string(s_.nodes * s_.workload.ranks_per_node), "--steps", steps, "-b",
                                         std::to_string(s_.workload.size_bytes)};
  auto r = runner.Run(argv, std::chrono::seconds(300));
  std::string expected;
  if (r.ok() && r->exit_code == 0 && r->out.rfind("digest: ", 0) == 0) expected = r->out.substr(8, 16);
  if (expected.empty()) {
    rec_->Event("error", {{"message", "fdrill-train-ref failed: " + (r.ok() ? r->err : r.status().message())}});
    return;
  }
  rec_->Event("digest_check", {{"steps", std::stoll(steps)}, {"digest", digest}, {"expected", expected},
                               {"intact", digest == expected}});
}

void DrillRun::ShowProgress(Duration now) {
  if (opt_.progress == nullptr) return;
  ProgressView v;
  v.phase = current_phase_;
  v.elapsed = now;
  v.total = total_;
  v.total_is_max = gated_;
  std::lock_guard<std::mutex> lock(mu_);
  v.busbw_gbps = monitor_->RecentBusbw();
  v.baseline_gbps = monitor_->baseline_median();
  for (const auto& [id, node] : applied_) v.faults.push_back(id.find('@') == std::string::npos ? id + "@" + node : id);
  v.attempt = restarts_;
  v.restarts_allowed = s_.workload.restart.max_restarts;
  opt_.progress->Update(v, clock_.Now());
}

Status DrillRun::WalkTimeline() {
  DrillEngine engine(s_);
  const auto t0 = clock_.Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    t0_wall_ns_ = clock_.WallNanos();
    monitor_ = std::make_unique<LiveMonitor>(std::max(1, ReportingRanks()), s_.stop, s_.recovery_window_iters);
  }
  while (!engine.Finished()) {
    const Duration now = clock_.Now() - t0;
    EngineInput in;
    std::optional<std::string> job_end;
    std::optional<int> exit_code;
    std::optional<std::string> hang;
    {
      std::lock_guard<std::mutex> lock(mu_);
      in.stable_since = monitor_->StableSince();
      in.stop = monitor_->StopReason(now);
      exit_code = workload_exit_;
      const auto& policy = s_.workload.restart;
      if (!exit_code && !relaunch_at_ && policy.hang_timeout) {
        const Duration limit = *policy.hang_timeout + (monitor_->AttemptReported() ? Duration{} : Duration(kLaunchGrace));
        if (monitor_->QuietFor(now) > limit) {
          hang = fmt::format("no iteration completed for {:.1f} s (hang_timeout {})", ToSeconds(monitor_->QuietFor(now)),
                             FormatDuration(*policy.hang_timeout));
        }
      }
    }
    if (failed_) return Status::Ok();  // a lost agent or lease: Cleanup reverts what it can
    if (hang) {
      // A hung job is a failed one: stop what is left of it (the launcher,
      // and through it every rank), then the policy decides.
      rec_->Event("workload_failed", {{"cause", "hang"}, {"reason", *hang}});
      const int code = StopRemains();
      {
        std::lock_guard<std::mutex> lock(mu_);
        workload_exit_ = code;  // it has exited (a relaunch clears this)
      }
      job_end = OnJobFailure(now, code, true);
    } else if (exit_code) {
      if (s_.workload.Train() && *exit_code == 0) {
        job_end = "the job finished its " + std::to_string(s_.workload.steps) + " steps";
      } else {
        // The job ended before the drill did (a killed rank, a collective
        // error): a result of the drill, not a failure of the harness.
        rec_->Event("workload_failed", {{"cause", "exit"}, {"exit_code", *exit_code},
                                        {"reason", "the workload exited with code " + std::to_string(*exit_code)}});
        (void)StopRemains();
        job_end = OnJobFailure(now, *exit_code, false);
      }
    }
    bool relaunch = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      relaunch = relaunch_at_ && now >= *relaunch_at_;
    }
    if (relaunch && !job_end) Relaunch(now);
    std::string cause;
    std::vector<Action> actions;
    if (job_end) {
      actions = engine.Abort(now, *job_end);
      cause = "job";
      job_ended_ = true;
    } else if (opt_.abort && opt_.abort->load()) {
      actions = engine.Abort(now, "interrupted (SIGINT/SIGTERM)");
      cause = "interrupted";
    } else {
      actions = engine.Advance(now, in);
      cause = in.stop ? "stop_condition" : "gate";
    }
    for (const Action& a : actions) {
      if (a.kind == Action::kAbort) {
        rec_->Event("abort", {{"reason", a.reason}, {"cause", cause}});
        abort_recorded_ = true;
        stopped_ = cause == "stop_condition" || cause == "gate";
        continue;
      }
      if (!Execute(a)) return Status::Ok();
      if (a.kind == Action::kPhaseEnd && a.phase == 0) {
        std::lock_guard<std::mutex> lock(mu_);
        monitor_->EndBaseline();
      }
    }
    // Impact seen live: the first complete iteration below the band that
    // ended after a fault's apply (docs/performance.md: detection latency).
    {
      std::lock_guard<std::mutex> lock(mu_);
      const std::optional<Duration> below = monitor_->last_below_band_end();
      const Duration at = clock_.Now() - t0;
      for (auto it = awaiting_impact_.begin(); it != awaiting_impact_.end();) {
        if ((below && *below > it->second) || monitor_->SlowInProgress(at, it->second)) {
          rec_->Event("impact_seen", {{"id", it->first}, {"after_s", ToSeconds(at - it->second)}});
          it = awaiting_impact_.erase(it);
        } else {
          ++it;
        }
      }
    }
    ShowProgress(clock_.Now() - t0);
    if (engine.Finished()) break;
    const Duration next = engine.NextDeadline().value_or(now);
    const auto wake = t0 + std::min(next, now + std::chrono::milliseconds(20));
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, std::max(wake, clock_.Now()), [this] { return Aborted() || workload_exit_.has_value(); });
  }
  return Status::Ok();
}

// Runs on every path once the fabric may have been touched.
void DrillRun::Cleanup() {
  for (const auto& [id, node] : std::map<std::string, std::string>(applied_)) {
    for (auto& n : nodes_) {
      if (n.name != node) continue;
      rec_->Event("fault_revert", {{"id", id}, {"node", node}, {"reason", "drill ending"}});
      auto r = n.link->Call("revert", {{"fault_id", id}}, kCallTimeout);
      if (r.ok()) rec_->Event("fault_reverted", {{"id", id}, {"node", node}, {"verified", r->value("verified", false)}});
    }
  }
  // Stop the workload: ask it to end cleanly, then make sure.
  bool exited = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    exited = workload_exit_.has_value();
  }
  if (!exited && !s_.workload.External()) {
    // fdrill-collective stops by itself at the stop file (rank 0 reads it on node 0).
    auto r = nodes_[0].link->Call("workload_stop", {{"stop_file", RunDir(nodes_[0]) + "/stop"}}, kCallTimeout);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(20), [this] { return workload_exit_.has_value(); });
    exited = workload_exit_.has_value();
  }
  if (!exited && job_) {
    // A real cluster's launcher: SIGTERM to its group (mpirun/srun end
    // their ranks), SIGKILL after 10 s; then every agent kills what is left.
    const int code = job_->Stop(std::chrono::seconds(10));
    rec_->Event("workload_exit", {{"node", "controller"}, {"exit_code", code}, {"forced", true}});
    exited = true;
    (void)StopRemains();
  }
  if (!exited) {
    auto r = nodes_[0].link->Call("workload_stop", {}, std::chrono::seconds(15));
    if (r.ok() && (*r)["exit_code"].is_number()) {
      rec_->Event("workload_exit", {{"node", nodes_[0].name}, {"exit_code", (*r)["exit_code"]}, {"forced", true}});
      (void)rec_->WriteFile("workload.log", r->value("log_tail", ""));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // the agents' last metrics tail
  if (s_.workload.Train()) CheckDigest();
  // Whatever happened, every agent reverts everything it holds.
  Json residue = Json::array();
  const auto reverted = CallEach("revert_all", {}, kCallTimeout);
  const auto snapshots = CallEach("snapshot", {}, kCallTimeout);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeLink& n = nodes_[i];
    const auto& r = reverted[i];
    if (!r.ok()) rec_->Event("error", {{"node", n.name}, {"message", "revert_all: " + r.status().message()}});
    const auto& after = snapshots[i];
    if (!after.ok()) {
      residue.push_back({{"node", n.name}, {"object", "snapshot"}, {"before", "taken"},
                         {"after", after.status().message()}});
      continue;
    }
    std::map<std::string, Json> before;
    for (const auto& l : n.snapshot["links"]) before[l["name"].get<std::string>()] = l;
    for (const auto& l : (*after)["links"]) {
      std::string name = l["name"];
      auto it = before.find(name);
      if (it == before.end()) {
        residue.push_back({{"node", n.name}, {"object", name}, {"before", nullptr}, {"after", l}});
        continue;
      }
      for (const char* key : {"admin_up", "qdisc", "qdisc_handle"}) {
        if (it->second[key] != l[key]) {
          residue.push_back({{"node", n.name}, {"object", name + " " + key}, {"before", it->second[key]},
                             {"after", l[key]}});
        }
      }
      before.erase(it);
    }
    for (const auto& [name, l] : before) {
      residue.push_back({{"node", n.name}, {"object", name}, {"before", l}, {"after", nullptr}});
    }
    // Process and host faults: stopped ranks, fdrill-burn processes and
    // cgroups (agents that predate the "host" snapshot send none).
    const Json none = Json::object();
    const Json& host_before = n.snapshot.contains("host") ? n.snapshot["host"] : none;
    const Json& host_after = after->contains("host") ? (*after)["host"] : none;
    for (const char* key : {"stopped_ranks", "burners", "burn_cgroups", "fdrill_rules"}) {
      if (host_before.contains(key) && host_after.contains(key) && host_before[key] != host_after[key]) {
        residue.push_back({{"node", n.name}, {"object", std::string("host ") + key},
                           {"before", host_before[key]}, {"after", host_after[key]}});
      }
    }
  }
  rec_->Event("residue", {{"items", residue}});
  if (!s_.Emulated()) {
    // The ranks' files are in the run directory now; each node's copy goes
    // (the emulated fabric's go with `fdrill fabric down`).
    std::vector<Json> bodies;
    for (const auto& n : nodes_) bodies.push_back({{"dir", RunDir(n)}});
    const auto removed = CallEachWith("run_dir_remove", bodies, kCallTimeout);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!removed[i].ok()) rec_->Event("run_dir_kept", {{"node", nodes_[i].name}, {"reason", removed[i].status().message()}});
    }
  }
}

void DrillRun::Shutdown() {
  closing_ = true;
  cv_.notify_all();
  if (lease_thread_.joinable()) lease_thread_.join();
  bool all_linked = !nodes_.empty();
  for (auto& n : nodes_) all_linked = all_linked && n.link != nullptr;
  if (all_linked) (void)CallEach("lease", {{"ttl_ms", 0}}, std::chrono::seconds(2));  // released
  for (auto& n : nodes_) {
    if (n.link) n.link->Close();
  }
  work_.reset();
  if (io_thread_.joinable()) {
    io_.stop();
    io_thread_.join();
  }
  nodes_.clear();
}

Status DrillRun::Run() {
  if (s_.Emulated() && static_cast<int>(fabric_.nodes.size()) < s_.nodes) {
    return FailedPrecondition(s_.file + ": the drill needs " + std::to_string(s_.nodes) +
                              " nodes and the emulated fabric has " + std::to_string(fabric_.nodes.size()) +
                              "; run `fdrill fabric down && fdrill fabric up --nodes " + std::to_string(s_.nodes) + "`");
  }
  if (auto st = Connect(); !st.ok()) return st;
  if (auto st = CheckFaults(); !st.ok()) return st;
  auto rec = RunRecorder::Create(opt_.out_dir, clock_);
  if (!rec.ok()) return rec.status();
  rec_ = std::move(*rec);
  live_rec_ = rec_.get();
  run_id_ = std::to_string(clock_.WallNanos() / 1000000);
  (void)rec_->WriteFile("scenario.yaml", s_.text);
  {
    // What the drill ran on, as each agent found it (fdrill inventory's
    // JSON); an agent that cannot say is recorded, not fatal.
    std::vector<std::string> names;
    for (const auto& n : nodes_) names.push_back(n.name);
    const Json inventory = ClusterInventory(names, CallEach("inventory", Json::object(), std::chrono::seconds(20)));
    (void)rec_->WriteFile("inventory.json", inventory.dump(2) + "\n");
  }
  Json plan = {{"name", s_.name}, {"nodes", s_.NodeNames()}, {"ranks", std::max(1, ReportingRanks())},
               {"fabric", s_.FabricName()},
               {"recovery_window_iters", s_.recovery_window_iters},
               {"expectations", {{"max_slowdown", s_.expect.max_slowdown ? Json(*s_.expect.max_slowdown) : Json(nullptr)},
                                 {"max_time_to_recover_s", s_.expect.max_time_to_recover_s ? Json(*s_.expect.max_time_to_recover_s) : Json(nullptr)},
                                 {"no_residue", s_.expect.no_residue},
                                 {"data_intact", s_.expect.data_intact},
                                 {"metrics", MetricLimitsJson(s_.expect.metrics)}}},
               {"stop", StopJson(s_.stop)}};
  (void)rec_->WriteFile("plan.json", plan.dump(2) + "\n");
  rec_->Event("drill_start", {{"name", s_.name}});
  for (auto& n : nodes_) {
    rec_->Event("agent_connected", {{"node", n.name}, {"address", n.link->address()},
                                    {"clock_offset_ms", static_cast<double>(n.offset_ns) / 1e6}});
  }
  std::string status = "completed";
  const auto snaps = CallEach("snapshot", {}, kCallTimeout);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeLink& n = nodes_[i];
    if (!snaps[i].ok()) {
      rec_->Event("error", {{"node", n.name}, {"message", "snapshot: " + snaps[i].status().message()}});
      status = "error";
      break;
    }
    n.snapshot = *snaps[i];
    rec_->Event("snapshot", {{"node", n.name}, {"state", n.snapshot}});
  }
  if (status == "completed") {
    if (auto st = StartWorkload(); !st.ok()) {
      rec_->Event("error", {{"message", "workload: " + st.message()}});
      status = "error";
    } else {
      (void)WalkTimeline();
      if (failed_) status = "error";
      else if ((opt_.abort && opt_.abort->load()) || job_ended_ || stopped_) status = "aborted";
    }
  }
  if (opt_.abort && opt_.abort->load() && !abort_recorded_) {
    rec_->Event("abort", {{"reason", "interrupted (SIGINT/SIGTERM)"}, {"cause", "interrupted"}});
  }
  if (opt_.progress != nullptr) opt_.progress->Finish();
  Cleanup();
  rec_->Event("drill_end", {{"status", status}});
  return Status::Ok();
}

}  // namespace

Status RunDrill(const Scenario& scenario, const FabricState& fabric, const DrillOptions& options) {
  DrillRun run(scenario, fabric, options);
  return run.Run();
}

}  // namespace fdrill
