// The drill's orchestrator: the steps of drill.h in order, each delegated to
// the component that does it; the only code here is the order, the run
// directory's fixed files (scenario.yaml, inventory.json, plan.json) and the
// routing of agent pushes.
#include "harness/controller/drill.h"

#include <unistd.h>  // environ

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "common/core/json.h"
#include "common/wire/counter_samples.h"
#include "common/wire/protocol.h"
#include "harness/controller/agent_set.h"
#include "harness/controller/cluster_launch.h"
#include "harness/controller/drill_agents.h"
#include "harness/controller/drill_context.h"
#include "harness/controller/drill_events.h"
#include "harness/controller/drill_state.h"
#include "harness/controller/plan_json.h"
#include "harness/controller/ras_watches.h"
#include "harness/controller/recorder.h"
#include "harness/controller/residue.h"
#include "harness/controller/slurm_watch.h"
#include "harness/controller/timeline_walker.h"
#include "harness/controller/workload_supervisor.h"
#include "harness/scenario/nccl_ib_timeout.h"
#include "harness/scenario/topology_switches.h"
#include "reports/run_dir.h"

namespace fdrill {

namespace {

class DrillRun {
 public:
  DrillRun(const Scenario& s, const DrillTargets& t, const DrillOptions& o)
      : s_(s),
        targets_(t),
        opt_(o),
        agents_(s, t, clock_),
        ctx_{s, o, clock_, state_, agents_, events_, t},
        workloads_(MakeWorkloads()),
        walker_(ctx_, workloads_) {
    state_.interrupt = o.abort;
  }
  // The agents first (their threads call into the rest), then the members
  // in reverse order: the workload's launcher stops while events still work.
  ~DrillRun() { agents_.Shutdown(); }

  Status Run();

 private:
  // The emulated fabric that is up is one the drill can run on.
  Status CheckFabricFits() const;
  // Step 1: every agent parses its faults' params and applies its guards.
  Status CheckFaults();
  // The run directory's fixed files and first events.
  void WriteRunFiles();
  // Step 2: "completed", or "error" when a node gave none.
  std::string Snapshot();
  void OnPush(const NodeLink& n, const Json& msg);
  // An agent's connection dropped or its lease failed: the drill fails; the
  // first loss of each agent names the faults left in force on it.
  void OnLost(const std::string& node, const std::string& message);
  // Step 5's start: every lost agent is given kLostAgentGrace to come back
  // (restarted by the fabric's supervisor or the node's systemd unit); what
  // its start-up journal sweep reverted is recorded and no longer in force.
  void ReconnectLost();
  // Step 5: runs on every path once the fabric may have been touched.
  void Cleanup();
  void CheckResidue();
  std::vector<std::unique_ptr<WorkloadSupervisor>> MakeWorkloads();
  // The workload NODE runs, or null (a node no tenant uses, a switch).
  WorkloadSupervisor* WorkloadOn(const std::string& node);

  const Scenario& s_;
  const DrillTargets& targets_;
  const DrillOptions& opt_;
  RealClock clock_;
  DrillState state_;
  DrillEvents events_;
  std::unique_ptr<RunRecorder> rec_;
  CounterSamples counter_samples_;  // the `counters` pushes, as whole samples
  std::string run_id_;
  std::vector<Json> before_;  // each node's snapshot before the drill
  std::mutex lost_mu_;
  // Agents lost during the drill (lost_mu_): each gets one agent_lost event
  // (a lease failure after a drop is the same loss).
  std::set<std::string> lost_;
  // The first loss or lapsed lease, as its error event says it (lost_mu_):
  // before the run directory exists (connecting, checking) events record
  // nothing, and Run returns it instead.
  std::string first_loss_;
  void NoteLoss(const std::string& node, const std::string& message);
  // The drill failed before its run directory existed: the first loss.
  Status FailedBeforeStart(const std::string& step);
  DrillAgents agents_;
  DrillContext ctx_;  // for the walker and the supervisors
  // One per workload (Scenario::Workloads()), each tenant on its own nodes.
  std::vector<std::unique_ptr<WorkloadSupervisor>> workloads_;
  // The NCCL RAS watches the agents run once the workloads started.
  std::vector<RasWatchPlan> ras_watches_;
  // What NCCL's IB timeout predicts of each link-down fault (plan.json's
  // predicted_job; the report's job outcomes are judged against it).
  std::map<std::string, std::string> predicted_job_;
  void StartRasWatches();
  // Every node's agent listens to its RDMA devices' async events for the
  // drill (ib_watch; `ib_async` pushes); a node without any says so and
  // records nothing.
  void StartIbWatches();
  TimelineWalker walker_;
};

std::vector<std::unique_ptr<WorkloadSupervisor>> DrillRun::MakeWorkloads() {
  std::vector<std::unique_ptr<WorkloadSupervisor>> out;
  const std::vector<WorkloadSpec> specs = s_.Workloads();
  for (size_t i = 0; i < specs.size(); ++i) {
    out.push_back(std::make_unique<WorkloadSupervisor>(ctx_, specs[i], i, *opt_.runner));
  }
  return out;
}

WorkloadSupervisor* DrillRun::WorkloadOn(const std::string& node) {
  for (auto& w : workloads_) {
    if (w->Has(node)) return w.get();
  }
  return nullptr;
}

// Each NCCL workload's nodes watch the job's RAS service (`ras` pushes); an
// agent that refuses says why in a `ras` event, and the drill goes on.
void DrillRun::StartRasWatches() {
  for (const RasWatchPlan& plan : ras_watches_) {
    const auto replies =
        agents_.CallEachNamed(plan.nodes, proto::kRasWatch,
                              std::vector<Json>(plan.nodes.size(), plan.body), kCallTimeout);
    for (size_t i = 0; i < replies.size(); ++i) {
      if (replies[i].ok()) continue;
      events_.Ras(plan.nodes[i],
                  {{proto::key::kWallNs, clock_.WallNanos()},
                   {proto::key::kAnswered, false},
                   {proto::key::kRasError, "ras_watch: " + replies[i].status().message()}});
    }
  }
}

void DrillRun::StartIbWatches() {
  const std::vector<std::string> nodes = s_.NodeNames();
  const auto lasting = std::chrono::duration_cast<std::chrono::milliseconds>(
      s_.TotalDuration() + std::chrono::minutes(1));
  const auto replies = agents_.CallEachNamed(
      nodes, proto::kIbWatch,
      std::vector<Json>(nodes.size(), Json{{proto::key::kForMs, lasting.count()}}), kCallTimeout);
  for (size_t i = 0; i < replies.size(); ++i) events_.IbWatch(nodes[i], replies[i]);
}

void DrillRun::OnPush(const NodeLink& n, const Json& msg) {
  std::string type = msg.value("type", "");
  if (type == proto::kRas) {
    events_.Ras(n.name, msg);
  } else if (type == proto::kIbAsync) {
    events_.IbAsync(n.name, msg);
  } else if (type == proto::kMetrics) {
    if (WorkloadSupervisor* w = WorkloadOn(n.name)) w->OnMetrics(n, msg[proto::key::kRecords]);
  } else if (type == proto::kCounters) {
    const std::shared_ptr<const Json> whole = counter_samples_.Apply(n.name, msg);
    if (!whole) return;  // a delta before the node's first whole sample
    const Json& counters = *whole;
    events_.Counters(n.name, counters, msg);
    int64_t t0 = 0;
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      t0 = state_.t0_wall_ns;
    }
    if (t0 != 0) state_.localiser.OnCounters(n.name, (clock_.WallNanos() - t0) / 1e9, counters);
  } else if (type == proto::kWorkloadExit) {
    if (WorkloadSupervisor* w = WorkloadOn(n.name)) {
      w->OnExit(n.name, msg.value(proto::key::kExitCode, -1), msg.value(proto::key::kLogTail, ""));
    }
  } else if (type == proto::kFaultExpired) {
    events_.Error(n.name, "fault " + msg.value(proto::key::kFaultId, "?") +
                              " outlived its max_duration; the agent reverted it");
    std::lock_guard<std::mutex> lock(state_.mu);
    if (!state_.monitors.empty()) state_.monitors.front()->AddError();
  } else if (type == proto::kLeaseExpired) {
    events_.Error(n.name, "the agent's lease lapsed; it reverted");
    NoteLoss(n.name, "the agent's lease lapsed; it reverted");
    state_.Fail();
  }
}

Status DrillRun::CheckFaults() {
  std::map<std::string, Json> per_node;
  for (const auto& phase : s_.phases) {
    for (const auto& f : phase.faults) {
      per_node[f.node].push_back(proto::FaultSpec{f.id, f.kind, f.params}.ToJson());
    }
  }
  // An RDMA workload's agents also refuse a fault its traffic never meets.
  bool rdma = false;
  for (const auto& w : s_.Workloads()) rdma |= w.Rdma();
  // Every agent at once; the first refusal in agent order is the error.
  std::vector<std::string> names;
  std::vector<Json> bodies;
  for (auto& n : agents_.agents()) {
    auto it = per_node.find(n.name);
    if (it == per_node.end()) continue;
    Json req = {{proto::key::kFaults, it->second}};
    if (rdma) req[proto::key::kTransport] = "rdma";
    names.push_back(n.name);
    bodies.push_back(std::move(req));
  }
  for (const auto& r : agents_.CallEachNamed(names, proto::kCheck, bodies, kCallTimeout)) {
    if (!r.ok()) return r.status().Annotate(s_.file);
  }
  return Status::Ok();
}

void DrillRun::WriteRunFiles() {
  (void)events_.WriteFile("scenario.yaml", s_.text);
  {
    // What the drill ran on, as each agent found it (fdrill inventory's
    // JSON); an agent that cannot say is recorded, not fatal.
    std::vector<std::string> names;
    for (const auto& n : agents_.agents()) names.push_back(n.name);
    Json inventory = ClusterInventory(
        names, agents_.CallEach(proto::kInventory, Json::object(), std::chrono::seconds(20)));
    // The switches, as `fdrill inventory` lists the emulated fabric's, or as
    // a real cluster's topology file and the agents' HCAs give them: the
    // report's fabric map draws them ...
    if (s_.Emulated() && !targets_.cabling.is_null()) {
      inventory["switches"] = targets_.cabling;
    } else if (!s_.Emulated() && s_.topology && !s_.topology->leaves.empty()) {
      inventory["switches"] = TopologySwitches(*s_.topology, inventory);
    }
    // ... and the live culprit may name one whole, as the report will.
    if (inventory.contains("switches")) {
      if (auto switches = InventorySwitches(inventory); switches.ok())
        state_.localiser.SetSwitches(std::move(*switches));
    }
    (void)events_.WriteFile("inventory.json", DumpJson(inventory, 2) + "\n");
  }
  (void)events_.WriteFile("plan.json",
                          DumpJson(PlanJson(s_, workloads_, predicted_job_), 2) + "\n");
  events_.DrillStart(s_.name);
  for (auto& n : agents_.agents()) events_.AgentConnected(n.name, n.link->address(), n.offset_ns);
}

std::string DrillRun::Snapshot() {
  std::vector<NodeLink>& nodes = agents_.agents();
  before_.assign(nodes.size(), Json());
  const auto snaps = agents_.CallEach(proto::kSnapshot, {}, kCallTimeout);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!snaps[i].ok()) {
      events_.Error(nodes[i].name, "snapshot: " + snaps[i].status().message());
      return "error";
    }
    before_[i] = *snaps[i];
    events_.Snapshot(nodes[i].name, before_[i]);
  }
  return "completed";
}

// The emulated fabric's supervisor restarts an agent within about a second,
// a node's systemd unit (packaging/fdrill-agent.service) after RestartSec=5s.
constexpr auto kLostAgentGrace = std::chrono::seconds(15);
// ssh's own ConnectTimeout is often 10 s; a host that does not answer in
// 20 s will not start Open MPI's daemon either.
constexpr auto kRshCheckTimeout = std::chrono::seconds(20);

void DrillRun::NoteLoss(const std::string& node, const std::string& message) {
  std::lock_guard<std::mutex> lock(lost_mu_);
  if (first_loss_.empty()) first_loss_ = node + ": " + message;
}

Status DrillRun::FailedBeforeStart(const std::string& step) {
  std::lock_guard<std::mutex> lock(lost_mu_);
  return Unavailable(s_.file + ": " + first_loss_ + " (" + step + "); nothing was applied");
}

void DrillRun::OnLost(const std::string& node, const std::string& message) {
  events_.Error(node, message);
  NoteLoss(node, message);
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(lost_mu_);
    first = lost_.insert(node).second;
  }
  if (first) events_.AgentLost(node, message, walker_.InForceOn(node), clock_.WallNanos());
  state_.Fail();
}

void DrillRun::ReconnectLost() {
  std::set<std::string> lost;
  {
    std::lock_guard<std::mutex> lock(lost_mu_);
    lost = lost_;
  }
  for (const std::string& node : lost) {
    // A lease that failed on a live connection (a node cut off): nothing
    // restarted, nothing to dial again.
    if (agents_.node(node).link->connected()) continue;
    auto hello = agents_.Reconnect(node, kLostAgentGrace);
    if (!hello.ok()) {
      events_.Error(node, "the lost agent did not come back: " + hello.status().message());
      continue;
    }
    NodeLink& n = agents_.node(node);
    events_.AgentReconnected(node, n.link->address(), clock_.WallNanos());
    const Json sweep = hello->value(proto::key::kStartSweep, Json());
    if (!sweep.is_object()) continue;  // an agent from before start_sweep
    std::vector<std::string> ids;
    for (const auto& f : sweep.value(proto::key::kFaults, Json::array())) {
      ids.push_back(f.value(proto::key::kFaultId, ""));
    }
    if (ids.empty()) continue;
    walker_.Swept(node, ids);
    const int64_t agent_wall = sweep.value(proto::key::kWallNs, int64_t{0});
    events_.FaultsSwept(node, ids, agent_wall - n.offset_ns);
  }
}

void DrillRun::Cleanup() {
  ReconnectLost();
  walker_.RevertInForce();
  for (auto& w : workloads_) w->Stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // the agents' last metrics tail
  if (s_.workload.Train()) workloads_.front()->CheckDigest();
  if (s_.expect.digest_equal) workloads_.front()->CheckJobDigest();
  CheckResidue();
  if (!s_.Emulated()) workloads_.front()->RemoveRunDirs();
}

// Whatever happened, every agent reverts everything it holds; what its
// node's state still differs in from the snapshot before is residue.
void DrillRun::CheckResidue() {
  std::vector<NodeLink>& nodes = agents_.agents();
  Json residue = Json::array();
  const auto reverted = agents_.CallEach(proto::kRevertAll, {}, kCallTimeout);
  const auto snapshots = agents_.CallEach(proto::kSnapshot, {}, kCallTimeout);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!reverted[i].ok()) {
      events_.Error(nodes[i].name, "revert_all: " + reverted[i].status().message());
    }
    for (auto& item : SnapshotResidue(nodes[i].name, before_[i], snapshots[i])) {
      residue.push_back(std::move(item));
    }
  }
  events_.Residue(residue);
}

// A flat drill runs on any flat fabric with enough nodes; a drill that
// declares rails, leaves or capacities needs exactly that fabric, since its
// nodes' places (which leaf, which rail) follow from the shape.
Status DrillRun::CheckFabricFits() const {
  const FabricShape& want = s_.emulated;
  const FabricShape& have = targets_.shape;
  const bool fits = want.Flat() && want.port_rate_bps == 0
                        ? have.Flat() && have.port_rate_bps == 0 && have.nodes >= want.nodes
                        : have == want;
  if (fits) return Status::Ok();
  return FailedPrecondition(s_.file + ": the drill needs an emulated fabric of " + want.Describe() +
                            " and the one up is " + have.Describe() +
                            "; run `fdrill fabric down && fdrill fabric up " + want.UpFlags() +
                            "`");
}

Status DrillRun::Run() {
  if (s_.Emulated()) {
    if (Status st = CheckFabricFits(); !st.ok()) return st;
  }
  // Before any agent is leased: mpirun's rsh agent must reach every host.
  if (Status st = CheckRshReachesEveryHost(s_, *opt_.runner, kRshCheckTimeout); !st.ok()) return st;
  auto ras = PlanRasWatches(s_, environ);
  if (!ras.ok()) return ras.status();
  ras_watches_ = std::move(*ras);
  if (s_.workload.Rdma()) {
    auto nccl = PredictNcclIbError(JobNcclEnv(s_.workload, environ));
    if (!nccl.ok()) return nccl.status().Annotate("the job's environment");
    predicted_job_ = PredictJobOutcomes(*nccl, s_);
  }
  // The drill's id: the agents' lease is (certificate, this); run_id_ names
  // the ranks' run directories.
  run_id_ = std::to_string(clock_.WallNanos() / 1000000);
  auto connected = agents_.Connect(
      opt_, s_.name + "@" + run_id_, [this](const NodeLink& n, const Json& m) { OnPush(n, m); },
      [this](const std::string& node, const std::string& message) { OnLost(node, message); });
  if (!connected.ok()) return connected;
  if (auto st = CheckFaults(); !st.ok()) return st;
  if (state_.failed) return FailedBeforeStart("while connecting to the agents and checking faults");
  auto rec = RunRecorder::Create(opt_.out_dir, clock_);
  if (!rec.ok()) return rec.status();
  rec_ = std::move(*rec);
  events_.Attach(rec_.get());
  for (auto& w : workloads_) w->set_run_id(run_id_);
  WriteRunFiles();
  // On a Slurm fabric, what Slurm says of the drill's nodes (and job) for
  // as long as the drill runs: `slurm_node` / `slurm_job` events.
  std::unique_ptr<SlurmWatch> slurm;
  if (s_.slurm) {
    const char* job = std::getenv("SLURM_JOB_ID");
    slurm = std::make_unique<SlurmWatch>(
        *opt_.runner, s_.slurm_nodelist, job != nullptr ? job : "",
        [this](const SlurmNodeState& n) { events_.SlurmNode(n.node, n.state, n.reason); },
        [this](const std::string& id, const std::string& state) { events_.SlurmJob(id, state); });
    slurm->Start(std::chrono::seconds(1));
  }
  std::string status = Snapshot();
  if (status == "completed") {
    StartIbWatches();
    Status started = Status::Ok();
    for (auto& w : workloads_) {
      if (!w->spec().start.empty()) continue;  // the walker starts it with its phase
      started = w->Start();
      if (!started.ok()) {
        const std::string& name = w->spec().name;
        events_.Error((name.empty() ? "workload: " : "workload " + name + ": ") +
                      started.message());
        status = "error";
        break;
      }
    }
    if (started.ok()) {
      StartRasWatches();
      walker_.Walk();
      if (state_.failed) {
        status = "error";
      } else if (state_.Interrupted() || walker_.job_ended() || walker_.stopped()) {
        status = "aborted";
      }
    }
  }
  if (state_.Interrupted() && !walker_.abort_recorded()) {
    events_.Abort("interrupted (SIGINT/SIGTERM/SIGHUP)", "interrupted");
  }
  if (opt_.progress != nullptr) opt_.progress->Finish();
  Cleanup();
  if (slurm) {
    slurm->Stop();
    slurm->SampleOnce();  // how Slurm left the nodes
  }
  events_.DrillEnd(status);
  return Status::Ok();
}

}  // namespace

Status RunDrill(const Scenario& scenario, const DrillTargets& targets,
                const DrillOptions& options) {
  if (options.runner == nullptr) {
    return InvalidArgument(scenario.file + ": RunDrill needs DrillOptions.runner");
  }
  DrillRun run(scenario, targets, options);
  return run.Run();
}

}  // namespace fdrill
