// With topology.cc, the only files that include yaml-cpp. Every mapping is checked against the
// keys it may hold, so a typo is an error with file:line:col and a hint, never
// a silently ignored setting.
#include <algorithm>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "harness/core/expectable_metrics.h"
#include "harness/core/fault_ref.h"
#include "harness/scenario/hostlist.h"
#include "harness/scenario/yaml_errors.h"
#include "harness/scenario/scenario.h"
#include "harness/scenario/selector.h"
#include "injectors/injector.h"
#include "harness/core/did_you_mean.h"

namespace fdrill {

namespace {

class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  Status Error(const YAML::Node& at, const std::string& what) const { return YamlError(file_, at, what); }

  Status CheckKeys(const YAML::Node& map, const std::string& section, const std::set<std::string>& allowed) const {
    return CheckYamlKeys(file_, map, section, allowed);
  }

  Result<std::string> Str(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) return Error(n, key + " must be a string");
    return n.as<std::string>();
  }

  Result<int64_t> Int(const YAML::Node& n, const std::string& key, int64_t min, int64_t max) const {
    int64_t v = 0;
    if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v)) return Error(n, key + " must be an integer");
    if (v < min || v > max) {
      return Error(n, key + " must be between " + std::to_string(min) + " and " + std::to_string(max));
    }
    return v;
  }

  Result<bool> Bool(const YAML::Node& n, const std::string& key) const {
    bool v = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) return Error(n, key + " must be true or false");
    return v;
  }

  Result<Duration> Dur(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) return Error(n, key + " must be a duration like 15s");
    auto d = ParseDuration(n.as<std::string>());
    if (!d.ok()) return Error(n, key + ": " + d.status().message());
    if (d->count() <= 0) return Error(n, key + " must be greater than zero");
    if (*d > kMaxDuration) return Error(n, key + " must be at most 7 days (168h)");
    return *d;
  }

  // A time from a phase's start (`at`): zero allowed, at most kMaxDuration;
  // nullopt when NODE is not one.
  std::optional<Duration> Offset(const YAML::Node& n) const {
    if (!n.IsScalar()) return std::nullopt;
    auto d = ParseDuration(n.as<std::string>());
    if (!d.ok() || d->count() < 0 || *d > kMaxDuration) return std::nullopt;
    return *d;
  }

  // Any one duration, and a whole drill with its repeats: sums stay far
  // from overflow (scenario_fuzz feeds 10000 repeats of 168h).
  static constexpr Duration kMaxDuration = std::chrono::hours(168);
  static constexpr Duration kMaxDrill = std::chrono::hours(24 * 30);

  // YAML scalars to JSON: integers and booleans keep their type, the rest
  // (durations, rates, names) are strings for the injector's parser.
  Json ToJson(const YAML::Node& n) const {
    if (n.IsMap()) {
      Json o = Json::object();
      // A non-scalar key cannot name a param; it is kept as an empty name,
      // which the injector's own params check refuses as an unknown key.
      for (const auto& kv : n) o[kv.first.IsScalar() ? kv.first.as<std::string>() : ""] = ToJson(kv.second);
      return o;
    }
    if (n.IsSequence()) {
      Json a = Json::array();
      for (const auto& e : n) a.push_back(ToJson(e));
      return a;
    }
    if (!n.IsScalar()) return nullptr;
    int64_t i = 0;
    bool b = false;
    if (n.Tag() != "!" && YAML::convert<int64_t>::decode(n, i)) return i;
    if (n.Tag() != "!" && YAML::convert<bool>::decode(n, b)) return b;
    return n.as<std::string>();
  }

  // A named selection from `targets:` (or a fault's own node:), resolved.
  struct Target {
    std::vector<std::string> nodes;
    Json params = Json::object();  // selector keys that are injector params (interface, port, gpu, ...)
  };
  // Where a phase entry lands after repeats: its name, and what to append
  // to the ids of the faults it holds.
  struct Copy {
    std::string name;
    std::string written;         // the name as written, for default fault ids
    std::string id_base_prefix;  // "cycle." inside a group
    std::string id_suffix;       // "#2" for the second copy
  };

  Status LoadFabric(const YAML::Node& n, Scenario* s) const;
  Status LoadHostsFile(const YAML::Node& at, Scenario* s) const;
  Status LoadSlurm(const YAML::Node& at, Scenario* s) const;
  Status LoadExternal(const YAML::Node& n, const Scenario& s, WorkloadSpec* w) const;
  // workload.KEY, when given, one of `allowed` (else "did you mean").
  Status Word(const YAML::Node& n, const char* key, const std::set<std::string>& allowed, std::string* out) const;
  Status LoadTargets(const YAML::Node& n, const Scenario& s);
  Result<Target> LoadSelection(const YAML::Node& n, const Scenario& s, const std::string& what) const;
  Status LoadWorkload(const YAML::Node& n, WorkloadSpec* w) const;
  Status LoadTrain(const YAML::Node& n, WorkloadSpec* w) const;
  Status LoadPhases(const YAML::Node& n, Scenario* s) const;
  Status LoadPhaseEntry(const YAML::Node& p, bool in_group, const std::string& prefix, Scenario* s,
                        std::set<std::string>* names, std::set<std::string>* ids) const;
  Status LoadPhase(const YAML::Node& p, const Copy& copy, Scenario* s, std::set<std::string>* names,
                   std::set<std::string>* ids) const;
  Status LoadFaults(const YAML::Node& n, const PhaseSpec& phase, size_t index, const Copy& copy, const Scenario& s,
                    std::vector<FaultSpec>* out) const;
  Status CheckOverlaps(const YAML::Node& at, const PhaseSpec& phase) const;
  Status LoadExpect(const YAML::Node& n, const Scenario& s, ExpectSpec* e) const;
  Status LoadSafety(const YAML::Node& n, Scenario* s) const;
  Status LoadStop(const YAML::Node& n, StopSpec* stop) const;
  Status LoadTopologyKey(const YAML::Node& n, Scenario* s) const;
  Status LoadBlastRadius(const YAML::Node& n, Scenario* s) const;
  Status CheckBlastRadius(const PhaseSpec& phase, const Scenario& s) const;
  Result<double> Number(const YAML::Node& n, const std::string& key) const;
  Result<std::vector<std::string>> StrList(const YAML::Node& n, const std::string& key) const;
  Result<Scenario> Load(const std::string& text);
  Result<Scenario> LoadChecked(const std::string& text);

  std::string base_dir_ = ".";
  mutable Duration total_{};  // the phases loaded so far, at their longest

 private:
  std::string file_;
  std::map<std::string, Target> targets_;
};

// What fdrill-collective accepts (workloads/collective.h ParseOp and
// friends are the authority; tests/scenario checks these lists against them).
const std::set<std::string> kOps = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                    "reduce",     "alltoall",   "sendrecv"};
const std::map<std::string, int> kDTypeBytes = {
    {"float32", 4}, {"float64", 8}, {"int32", 4}, {"float16", 2}, {"bfloat16", 2}};
const std::set<std::string> kRedOps = {"sum", "prod", "min", "max"};

// Keys a target (or a fault) may use to select nodes; every other key of a
// target is an injector param.
const std::set<std::string> kSelectorKeys = {"nodes", "random"};

Result<double> Loader::Number(const YAML::Node& n, const std::string& key) const {
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v)) {
    return Error(n, key + " must be a number");
  }
  return v;
}

Result<std::vector<std::string>> Loader::StrList(const YAML::Node& n, const std::string& key) const {
  std::vector<std::string> out;
  if (n.IsScalar()) {
    out.push_back(n.as<std::string>());
    return out;
  }
  if (!n.IsSequence() || n.size() == 0) return Error(n, key + " must be a name, a hostlist like n[1-3], or a list of them");
  for (const auto& e : n) {
    auto v = Str(e, key);
    if (!v.ok()) return v.status();
    out.push_back(*v);
  }
  return out;
}

Status Loader::LoadHostsFile(const YAML::Node& at, Scenario* s) const {
  auto path = Str(at, "fabric.hosts");
  if (!path.ok()) return path.status();
  std::filesystem::path p(*path);
  if (p.is_relative()) p = std::filesystem::path(base_dir_) / p;
  auto hosts = ReadHostsFile(p.string());
  // Named from the scenario's place, then the hosts file's own ("FILE:LINE: ...").
  if (!hosts.ok()) {
    return Error(at, hosts.status().message() +
                         (hosts.status().code() == StatusCode::kNotFound ? " (a relative path starts at the scenario's directory)" : ""));
  }
  if (hosts->size() < 2) return Error(at, "the hosts file " + p.string() + " names fewer than 2 hosts");
  s->host_names = std::move(*hosts);
  s->hosts_file = p.string();
  return Status::Ok();
}

// fabric: {slurm: true}: the allocation this runs in. The loader reads
// SLURM_JOB_NODELIST (set by salloc/sbatch for the job's nodes) so validate
// and plan show the very nodes run will touch.
Status Loader::LoadSlurm(const YAML::Node& at, Scenario* s) const {
  auto on = Bool(at, "fabric.slurm");
  if (!on.ok()) return on.status();
  if (!*on) return Error(at, "fabric.slurm: false is no fabric; use slurm: true, hosts: FILE or emulated: {nodes: N}");
  std::string list;
  auto hosts = SlurmJobNodes(&list);
  if (!hosts.ok() && hosts.status().code() == StatusCode::kNotFound) {
    return Error(at, "fabric.slurm: SLURM_JOB_NODELIST is not set: run inside an allocation (salloc -N 4, or an "
                     "sbatch script), or set it to check the drill outside one (SLURM_JOB_NODELIST='gpu[01-04]' "
                     "fdrill validate FILE)");
  }
  if (!hosts.ok()) return Error(at, hosts.status().message());
  if (hosts->size() < 2) return Error(at, "the Slurm allocation " + list + " has fewer than 2 nodes");
  s->host_names = std::move(*hosts);
  s->slurm = true;
  s->slurm_nodelist = list;
  return Status::Ok();
}

Status Loader::LoadFabric(const YAML::Node& n, Scenario* s) const {
  if (auto st = CheckKeys(n, "fabric", {"emulated", "hosts", "slurm", "agent_port"}); !st.ok()) return st;
  const int kinds = (n["emulated"] ? 1 : 0) + (n["hosts"] ? 1 : 0) + (n["slurm"] ? 1 : 0);
  if (kinds > 1) return Error(n, "fabric is one of emulated: {nodes: N}, hosts: FILE or slurm: true");
  if (n["hosts"] || n["slurm"]) {
    if (auto st = n["hosts"] ? LoadHostsFile(n["hosts"], s) : LoadSlurm(n["slurm"], s); !st.ok()) return st;
    s->nodes = static_cast<int>(s->host_names.size());
    if (n["agent_port"]) {
      auto port = Int(n["agent_port"], "fabric.agent_port", 1, 65535);
      if (!port.ok()) return port.status();
      s->agent_port = static_cast<int>(*port);
    }
    return Status::Ok();
  }
  if (n["agent_port"]) return Error(n["agent_port"], "fabric.agent_port is for hosts and slurm fabrics; the emulated fabric places its agents");
  const YAML::Node em = n["emulated"];
  if (!em) return Error(n, "fabric needs emulated: {nodes: N}, hosts: FILE or slurm: true");
  if (auto st = CheckKeys(em, "fabric.emulated", {"nodes"}); !st.ok()) return st;
  if (!em["nodes"]) return Error(em, "fabric.emulated needs nodes");
  auto nodes = Int(em["nodes"], "fabric.emulated.nodes", 2, 200);
  if (!nodes.ok()) return nodes.status();
  s->nodes = static_cast<int>(*nodes);
  return Status::Ok();
}

// nodes: hostlist or list, random: {count|percent, seed}; in a target, any
// other key is an injector param (the fault's kind decides whether it fits).
Result<Loader::Target> Loader::LoadSelection(const YAML::Node& n, const Scenario& s, const std::string& what) const {
  Target t;
  if (!n.IsMap()) return Error(n, what + " must be a mapping like {nodes: n[1-2], random: {count: 1, seed: 7}}");
  if (!n["nodes"]) return Error(n, what + " needs nodes (a name, a hostlist like n[1-3], or a list)");
  auto exprs = StrList(n["nodes"], what + ".nodes");
  if (!exprs.ok()) return exprs.status();
  auto nodes = SelectNodes(*exprs, s.NodeNames());
  if (!nodes.ok()) return Error(n["nodes"], what + ".nodes: " + nodes.status().message());
  t.nodes = *nodes;
  if (n["random"]) {
    const YAML::Node r = n["random"];
    if (auto st = CheckKeys(r, what + ".random", {"count", "percent", "seed"}); !st.ok()) return st;
    if (!r["seed"]) {
      return Error(r, what + ".random needs a seed (any integer): the same seed picks the same nodes in plan and run");
    }
    if (static_cast<bool>(r["count"]) == static_cast<bool>(r["percent"])) {
      return Error(r, what + ".random needs exactly one of count and percent");
    }
    RandomPick pick;
    auto seed = Int(r["seed"], what + ".random.seed", 0, INT64_MAX);
    if (!seed.ok()) return seed.status();
    pick.seed = static_cast<uint64_t>(*seed);
    if (r["count"]) {
      auto c = Int(r["count"], what + ".random.count", 1, 100000);
      if (!c.ok()) return c.status();
      pick.count = static_cast<int>(*c);
    } else {
      auto p = Number(r["percent"], what + ".random.percent");
      if (!p.ok()) return p.status();
      pick.percent = *p;
    }
    auto picked = PickRandom(t.nodes, pick);
    if (!picked.ok()) return Error(r, what + ".random: " + picked.status().message());
    t.nodes = *picked;
  }
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    if (!kSelectorKeys.count(key)) t.params[key] = ToJson(kv.second);
  }
  return t;
}

Status Loader::LoadTargets(const YAML::Node& n, const Scenario& s) {
  if (!n.IsMap()) return Error(n, "targets must be a mapping of names to selections");
  for (const auto& kv : n) {
    auto name = Str(kv.first, "target name");
    if (!name.ok()) return name.status();
    auto t = LoadSelection(kv.second, s, "target " + *name);
    if (!t.ok()) return t.status();
    targets_[*name] = std::move(*t);
  }
  return Status::Ok();
}

// mode, steps, checkpoint_every and the restart policy.
Status Loader::LoadTrain(const YAML::Node& n, WorkloadSpec* w) const {
  if (n["mode"]) {
    auto m = Str(n["mode"], "workload.mode");
    if (!m.ok()) return m.status();
    if (*m != "sweep" && *m != "train") return Error(n["mode"], "workload.mode must be sweep (the default) or train");
    w->mode = *m;
  }
  if (!w->Train()) {
    for (const char* key : {"steps", "checkpoint_every", "restart"}) {
      if (n[key]) {
        return Error(n[key], std::string("workload.") + key +
                                 " needs mode: train (a restart resumes from the checkpoint the training loop writes)");
      }
    }
    return Status::Ok();
  }
  if (!n["steps"] || !n["checkpoint_every"]) {
    return Error(n, "mode: train needs steps: N and checkpoint_every: K (like steps: 2000, checkpoint_every: 50)");
  }
  auto steps = Int(n["steps"], "workload.steps", 1, int64_t{1} << 40);
  if (!steps.ok()) return steps.status();
  w->steps = *steps;
  auto every = Int(n["checkpoint_every"], "workload.checkpoint_every", 1, w->steps);
  if (!every.ok()) return every.status();
  w->checkpoint_every = *every;
  if (n["restart"]) {
    const YAML::Node r = n["restart"];
    if (auto st = CheckKeys(r, "workload.restart", {"max_restarts", "backoff", "hang_timeout"}); !st.ok()) return st;
    if (r["max_restarts"]) {
      auto m = Int(r["max_restarts"], "workload.restart.max_restarts", 0, 100);
      if (!m.ok()) return m.status();
      w->restart.max_restarts = static_cast<int>(*m);
    }
    if (r["backoff"]) {
      auto d = Dur(r["backoff"], "workload.restart.backoff");
      if (!d.ok()) return d.status();
      w->restart.backoff = *d;
    }
    if (r["hang_timeout"]) {
      auto d = Dur(r["hang_timeout"], "workload.restart.hang_timeout");
      if (!d.ok()) return d.status();
      w->restart.hang_timeout = *d;
    }
  }
  return Status::Ok();
}

Status Loader::LoadWorkload(const YAML::Node& n, WorkloadSpec* w) const {
  if (auto s = CheckKeys(n, "workload", {"mode", "op", "dtype", "redop", "size", "ranks_per_node", "backend", "warmup",
                                         "steps", "checkpoint_every", "restart", "command", "output", "launcher",
                                         "launcher_args", "rsh_agent"});
      !s.ok())
    return s;
  if (auto st = LoadTrain(n, w); !st.ok()) return st;
  std::set<std::string> dtypes;
  for (const auto& [d, bytes] : kDTypeBytes) dtypes.insert(d);
  if (w->Train()) {
    // fdrill-collective --train all-reduces (sum) a float64 state.
    for (const char* key : {"op", "dtype", "redop", "warmup"}) {
      if (n[key]) return Error(n[key], std::string("workload.") + key + " is fixed in mode: train (all_reduce, float64, sum, no warm-up); drop it");
    }
    w->dtype = "float64";
  }
  if (auto st = Word(n, "op", kOps, &w->op); !st.ok()) return st;
  if (auto st = Word(n, "dtype", dtypes, &w->dtype); !st.ok()) return st;
  if (auto st = Word(n, "redop", kRedOps, &w->redop); !st.ok()) return st;
  if (n["redop"] && !w->Reduces()) {
    return Error(n["redop"], "workload.redop: " + w->op + " does not reduce; drop redop");
  }
  if (auto st = Word(n, "backend", {"mpi", "nccl"}, &w->backend); !st.ok()) return st;
  if (n["size"]) {
    auto text = Str(n["size"], "workload.size");
    if (!text.ok()) return text.status();
    auto sz = ParseSizeBytes(*text);
    if (!sz.ok()) return Error(n["size"], "workload.size: " + sz.status().message());
    w->size_bytes = *sz;
  }
  const int elem = kDTypeBytes.at(w->dtype);
  if (w->size_bytes == 0 || w->size_bytes % static_cast<uint64_t>(elem) != 0) {
    return Error(n["size"] ? n["size"] : n, "workload.size must be a positive multiple of " + std::to_string(elem) +
                                                " bytes (one " + w->dtype + ")");
  }
  if (n["ranks_per_node"]) {
    auto r = Int(n["ranks_per_node"], "workload.ranks_per_node", 1, 64);
    if (!r.ok()) return r.status();
    w->ranks_per_node = static_cast<int>(*r);
  }
  if (n["warmup"]) {
    auto r = Int(n["warmup"], "workload.warmup", 0, 1000);
    if (!r.ok()) return r.status();
    w->warmup = static_cast<int>(*r);
  }
  return Status::Ok();
}

Status Loader::Word(const YAML::Node& n, const char* key, const std::set<std::string>& allowed, std::string* out) const {
  if (!n[key]) return Status::Ok();
  auto v = Str(n[key], std::string("workload.") + key);
  if (!v.ok()) return v.status();
  if (!allowed.count(*v)) {
    std::string hint = DidYouMean(*v, allowed);
    return Error(n[key], std::string("workload.") + key + " \"" + *v + "\" is not one of " + JoinWords(allowed) +
                             (hint.empty() ? "" : "; " + hint));
  }
  *out = *v;
  return Status::Ok();
}

// command, output, launcher, launcher_args, rsh_agent: how a real cluster's
// job starts (scenario.h WorkloadSpec). The emulated fabric runs
// fdrill-collective through its own mpirun line, so none of these apply.
Status Loader::LoadExternal(const YAML::Node& n, const Scenario& s, WorkloadSpec* w) const {
  const char* keys[] = {"command", "output", "launcher", "launcher_args", "rsh_agent"};
  if (s.Emulated()) {
    for (const char* key : keys) {
      if (n[key]) {
        return Error(n[key], std::string("workload.") + key + " is for a real cluster (fabric: {hosts: FILE} or "
                                 "{slurm: true}); the emulated fabric runs fdrill-collective with its own mpirun line");
      }
    }
    return Status::Ok();
  }
  auto list = [&](const char* key, std::vector<std::string>* out) -> Status {
    if (!n[key]) return Status::Ok();
    if (!n[key].IsSequence() || n[key].size() == 0) {
      return Error(n[key], std::string("workload.") + key + " must be a list of words, like [all_reduce_perf, -b, 1G, -e, 1G, -N, 0]");
    }
    for (const auto& e : n[key]) {
      auto v = Str(e, std::string("workload.") + key);
      if (!v.ok()) return v.status();
      out->push_back(*v);
    }
    return Status::Ok();
  };
  if (auto st = list("command", &w->command); !st.ok()) return st;
  if (auto st = list("launcher_args", &w->launcher_args); !st.ok()) return st;
  if (auto st = Word(n, "launcher", {"mpirun", "srun", "none"}, &w->launcher); !st.ok()) return st;
  if (w->External()) {
    // nccl-tests binaries are all <collective>_perf; anything else reports no iterations unless told.
    const std::string base = std::filesystem::path(w->command.front()).filename().string();
    w->output = base.size() > 5 && base.compare(base.size() - 5, 5, "_perf") == 0 ? "nccl-tests" : "none";
    if (auto st = Word(n, "output", {"nccl-tests", "none"}, &w->output); !st.ok()) return st;
    if (w->Train()) return Error(n["mode"], "workload.mode: train runs fdrill-collective (its digest is checked); drop command or mode");
  } else if (n["output"]) {
    return Error(n["output"], "workload.output describes a command's output; without command the workload is fdrill-collective");
  }
  if (w->launcher == "srun" && !s.slurm) {
    return Error(n["launcher"], "workload.launcher srun runs a job step inside the allocation: use fabric: {slurm: true}, or launcher: mpirun");
  }
  if (n["rsh_agent"]) {
    if (w->launcher != "mpirun") return Error(n["rsh_agent"], "workload.rsh_agent is mpirun's (plm_rsh_agent); launcher is " + w->launcher);
    auto v = Str(n["rsh_agent"], "workload.rsh_agent");
    if (!v.ok()) return v.status();
    if (v->empty()) return Error(n["rsh_agent"], "workload.rsh_agent must name a command, like ssh or rsh");
    w->rsh_agent = *v;
  }
  if (w->launcher == "none" && !w->External()) {
    return Error(n["launcher"], "workload.launcher none runs a command that starts itself; it needs workload.command");
  }
  return Status::Ok();
}

// One fault entry: its selection (node: or target:), window (at:, for:) and
// ramp expand into one FaultSpec per node and ramp step.
Status Loader::LoadFaults(const YAML::Node& n, const PhaseSpec& phase, size_t index, const Copy& copy,
                          const Scenario& s, std::vector<FaultSpec>* out) const {
  if (auto st = CheckKeys(n, "fault", {"id", "kind", "node", "target", "params", "at", "for", "ramp", "max_duration"});
      !st.ok())
    return st;
  const int line = n.Mark().line + 1;
  if (!n["kind"]) return Error(n, "fault needs a kind (one of the names `fdrill injectors` lists)");
  auto kind = Str(n["kind"], "kind");
  if (!kind.ok()) return kind.status();
  // Which nodes.
  if (n["node"] && n["target"]) return Error(n["target"], "a fault takes node: or target:, not both");
  Target target;
  if (n["target"]) {
    auto name = Str(n["target"], "target");
    if (!name.ok()) return name.status();
    auto it = targets_.find(*name);
    if (it == targets_.end()) {
      std::set<std::string> known;
      for (const auto& [k, v] : targets_) known.insert(k);
      std::string hint = DidYouMean(*name, known);
      return Error(n["target"], "target \"" + *name + "\" is not defined in targets:" +
                                    (hint.empty() ? "" : "; " + hint));
    }
    target = it->second;
  } else if (n["node"]) {
    auto exprs = StrList(n["node"], "node");
    if (!exprs.ok()) return exprs.status();
    auto nodes = SelectNodes(*exprs, s.NodeNames());
    if (!nodes.ok()) return Error(n["node"], nodes.status().message());
    target.nodes = *nodes;
  } else {
    return Error(n, "fault needs a node (" + s.NodeNames().front() + ".." + s.NodeNames().back() +
                        ", a hostlist like n[1-2]) or a target");
  }
  // Params: the target's selector params plus the fault's own.
  Json params = target.params;
  if (n["params"]) {
    if (!n["params"].IsMap()) return Error(n["params"], "params must be a mapping");
    const Json own = ToJson(n["params"]);
    for (const auto& [k, v] : own.items()) {
      if (params.contains(k)) {
        return Error(n["params"], "param " + k + " is set by both the target and the fault; keep one");
      }
      params[k] = v;
    }
  }
  // Window.
  Duration at{};
  if (n["at"] && n["at"].IsMap()) {
    // at: {between: [2s, 6s], seed: 3}: a seeded random time in [2s, 6s),
    // fixed when the scenario loads (fdrill plan shows it).
    const YAML::Node r = n["at"];
    if (auto st = CheckKeys(r, "at", {"between", "seed"}); !st.ok()) return st;
    if (!r["between"] || !r["between"].IsSequence() || r["between"].size() != 2 || !r["seed"]) {
      return Error(r, "at: {between: [FROM, TO], seed: N} picks a time in [FROM, TO) with the seed");
    }
    const auto lo = Offset(r["between"][0]);
    const auto hi = Offset(r["between"][1]);
    if (!lo || !hi || *hi <= *lo) {
      return Error(r["between"], "at.between must be two durations, the first smaller, like [0s, 5s]");
    }
    auto seed = Int(r["seed"], "at.seed", 0, INT64_MAX);
    if (!seed.ok()) return seed.status();
    at = PickTime(*lo, *hi, static_cast<uint64_t>(*seed));
  } else if (n["at"]) {
    const auto d = Offset(n["at"]);
    if (!d) return Error(n["at"], "at must be a duration like 2s (from the phase's start), at most 168h");
    at = *d;
  }
  Duration length{};
  if (n["for"]) {
    auto d = Dur(n["for"], "for");
    if (!d.ok()) return d.status();
    length = *d;
  } else if (phase.gate) {
    return Error(n, "a fault in phase " + phase.name + " (which waits until stable) needs for: its length, "
                    "because the phase's end is not known in advance");
  }
  const Duration room = phase.duration;  // a gated phase's minimum
  if (at >= room || (n["for"] && at + length > room)) {
    return Error(n["at"] ? n["at"] : n["for"],
                 "impossible timeline: the fault's window " + FormatDuration(at) + " + " +
                     (n["for"] ? FormatDuration(length) : std::string("to the end")) + " does not fit in phase " +
                     phase.name + " (" + FormatDuration(room) + (phase.gate ? " minimum" : "") + ")");
  }
  const Duration window = n["for"] ? length : room - at;
  // Ramp: {param: [v1, v2, ...]} splits the window into equal steps.
  std::string ramp_key;
  std::vector<Json> ramp_values;
  if (n["ramp"]) {
    const YAML::Node r = n["ramp"];
    if (!r.IsMap() || r.size() != 1) {
      return Error(r, "ramp must name one param and its values, like ramp: {rate: [400mbit, 100mbit, 25mbit]}");
    }
    ramp_key = r.begin()->first.as<std::string>();
    const YAML::Node vals = r.begin()->second;
    if (!vals.IsSequence() || vals.size() < 2) return Error(vals, "ramp " + ramp_key + " needs a list of at least 2 values");
    if (params.contains(ramp_key)) return Error(r, "ramp param " + ramp_key + " is also set in params; keep one");
    for (const auto& v : vals) ramp_values.push_back(ToJson(v));
    if (window / static_cast<int64_t>(ramp_values.size()) < std::chrono::milliseconds(500)) {
      return Error(r, "impossible timeline: " + std::to_string(ramp_values.size()) + " ramp steps in " +
                          FormatDuration(window) + " leave less than 500ms each");
    }
  }
  std::string base = copy.id_base_prefix + copy.written + "-" + *kind +
                     (index ? std::to_string(index) : "");
  if (n["id"]) {
    auto id = Str(n["id"], "fault id");
    if (!id.ok()) return id.status();
    if (id->empty() || id->find_first_of("@#") != std::string::npos) {
      return Error(n["id"], "fault id must be non-empty and without @ or # (fdrill appends those for repeats, nodes and ramp steps)");
    }
    base = *id;
  }
  base += copy.id_suffix;
  const size_t steps = ramp_values.empty() ? 1 : ramp_values.size();
  for (const auto& node : target.nodes) {
    for (size_t k = 0; k < steps; ++k) {
      FaultSpec f;
      f.kind = *kind;
      f.node = node;
      f.line = line;
      f.column = n.Mark().column + 1;
      f.params = params;
      f.id = base + (target.nodes.size() > 1 || n["target"] ? "@" + node : "");
      f.at = at;
      f.length = n["for"] ? length : Duration{};
      if (!ramp_values.empty()) {
        f.params[ramp_key] = ramp_values[k];
        const Duration step = window / static_cast<int64_t>(steps);
        f.at = at + step * static_cast<int64_t>(k);
        f.length = k + 1 == steps ? window - step * static_cast<int64_t>(k) : step;
        const Json& v = ramp_values[k];
        f.id += "@" + (v.is_string() ? v.get<std::string>() : v.dump());
      }
      const Duration on = f.length.count() ? f.length : room - f.at;
      f.max_duration = on + s.lease_ttl;
      if (n["max_duration"]) {
        auto d = Dur(n["max_duration"], "max_duration");
        if (!d.ok()) return d.status();
        if (*d < on) {
          return Error(n["max_duration"], "fault max_duration " + FormatDuration(*d) + " is shorter than its window (" +
                                              FormatDuration(on) + "); the agent would revert it early");
        }
        f.max_duration = *d;
      }
      // The injector's own parser validates params; nothing is touched.
      auto made = MakeFault(f.kind, f.params, Host{});
      if (!made.ok()) {
        const YAML::Node& where = n["ramp"] ? n["ramp"] : n["params"] ? n["params"] : n["target"] ? n["target"] : n["kind"];
        return Error(where, "fault " + f.id + ": " + made.status().message());
      }
      out->push_back(std::move(f));
    }
  }
  return Status::Ok();
}

// Two faults of one kind on the same node and interface cannot hold it at
// once (the second would replace the first's qdisc or rule).
Status Loader::CheckOverlaps(const YAML::Node& at, const PhaseSpec& phase) const {
  auto end = [&](const FaultSpec& f) { return f.length.count() ? f.at + f.length : phase.duration; };
  for (size_t i = 0; i < phase.faults.size(); ++i) {
    for (size_t j = i + 1; j < phase.faults.size(); ++j) {
      const FaultSpec& a = phase.faults[i];
      const FaultSpec& b = phase.faults[j];
      if (a.node != b.node || a.kind != b.kind || a.params.value("interface", "") != b.params.value("interface", "")) continue;
      if (a.at < end(b) && b.at < end(a)) {
        return Error(at, "impossible timeline: faults " + a.id + " and " + b.id + " both hold " + a.kind + " on " + a.node +
                             (a.params.contains("interface") ? " " + a.params.value("interface", "") : "") +
                             " at once in phase " + phase.name);
      }
    }
  }
  return Status::Ok();
}

Status Loader::LoadPhase(const YAML::Node& p, const Copy& copy, Scenario* s, std::set<std::string>* names,
                         std::set<std::string>* ids) const {
  PhaseSpec phase;
  phase.name = copy.name;
  if (!names->insert(phase.name).second) return Error(p["name"], "phase name \"" + phase.name + "\" is used twice");
  if (p["until"]) {
    auto until = Str(p["until"], "until");
    if (!until.ok()) return until.status();
    if (*until != "stable") return Error(p["until"], "until must be stable (the job back in the baseline band)");
    if (!p["timeout"]) return Error(p, "phase " + phase.name + " waits until stable and needs timeout: the longest it may wait");
    GateSpec gate;
    auto t = Dur(p["timeout"], "timeout");
    if (!t.ok()) return t.status();
    gate.timeout = *t;
    if (p["on_timeout"]) {
      auto o = Str(p["on_timeout"], "on_timeout");
      if (!o.ok()) return o.status();
      if (*o != "abort" && *o != "continue") return Error(p["on_timeout"], "on_timeout must be abort or continue");
      gate.abort_on_timeout = *o == "abort";
    }
    phase.gate = gate;
    phase.duration = std::chrono::seconds(1);
    if (p["duration"]) {
      auto d = Dur(p["duration"], "duration");
      if (!d.ok()) return d.status();
      phase.duration = *d;
    }
    if (phase.duration > gate.timeout) {
      return Error(p["timeout"], "impossible timeline: timeout " + FormatDuration(gate.timeout) +
                                     " is shorter than the phase's minimum duration " + FormatDuration(phase.duration));
    }
  } else {
    for (const char* key : {"timeout", "on_timeout"}) {
      if (p[key]) return Error(p[key], std::string(key) + " belongs to a phase with until: stable");
    }
    if (!p["duration"]) return Error(p, "phase " + phase.name + " needs a duration (like 15s) or until: stable");
    auto d = Dur(p["duration"], "duration");
    if (!d.ok()) return d.status();
    phase.duration = *d;
  }
  if (p["faults"]) {
    if (!p["faults"].IsSequence()) return Error(p["faults"], "faults must be a list");
    std::set<std::string> nodes;
    for (size_t i = 0; i < p["faults"].size(); ++i) {
      std::vector<FaultSpec> made;
      if (auto st = LoadFaults(p["faults"][i], phase, i, copy, *s, &made); !st.ok()) return st;
      for (auto& f : made) {
        if (!ids->insert(f.id).second) return Error(p["faults"][i], "fault id \"" + f.id + "\" is used twice");
        nodes.insert(f.node);
        phase.faults.push_back(std::move(f));
      }
    }
    if (static_cast<int>(nodes.size()) > s->max_faulted_nodes) {
      return Error(p["faults"], "phase " + phase.name + " faults " + std::to_string(nodes.size()) +
                                    " nodes; safety.max_faulted_nodes (the blast radius) allows " +
                                    std::to_string(s->max_faulted_nodes));
    }
    if (auto st = CheckOverlaps(p["faults"], phase); !st.ok()) return st;
    if (auto st = CheckBlastRadius(phase, *s); !st.ok()) return st;
  }
  total_ += phase.MaxDuration();
  if (total_ > kMaxDrill) {
    return Error(p, "the drill would last more than 30 days (repeats included); split it");
  }
  // Checked as they are made: a group repeated 10000 times must not build
  // millions of phases first.
  if (s->phases.size() >= 20000) return Error(p, "the repeats expand to more than 20000 phases");
  s->phases.push_back(std::move(phase));
  return Status::Ok();
}

// A phase, a repeated phase, or a group of phases repeated together.
Status Loader::LoadPhaseEntry(const YAML::Node& p, bool in_group, const std::string& prefix, Scenario* s,
                              std::set<std::string>* names, std::set<std::string>* ids) const {
  const bool group = p.IsMap() && p["phases"];
  if (group) {
    if (auto st = CheckKeys(p, "phase group", {"name", "repeat", "phases"}); !st.ok()) return st;
    if (in_group) return Error(p["phases"], "a group's phases cannot hold another group");
  } else if (auto st = CheckKeys(p, "phase", {"name", "duration", "faults", "repeat", "until", "timeout", "on_timeout"});
             !st.ok()) {
    return st;
  }
  if (!p["name"]) return Error(p, group ? "phase group needs a name" : "phase needs a name");
  auto name = Str(p["name"], "phase name");
  if (!name.ok()) return name.status();
  if (name->empty() || name->find_first_of("#.@") != std::string::npos) {
    return Error(p["name"], "phase name must be non-empty and without #, . or @ (fdrill uses those for repeats and groups)");
  }
  int repeat = 1;
  if (p["repeat"]) {
    auto r = Int(p["repeat"], "repeat", 1, 10000);
    if (!r.ok()) return r.status();
    repeat = static_cast<int>(*r);
  }
  for (int k = 1; k <= repeat; ++k) {
    const std::string suffix = repeat > 1 ? "#" + std::to_string(k) : "";
    if (group) {
      if (!p["phases"].IsSequence() || p["phases"].size() == 0) return Error(p["phases"], "a group's phases must be a non-empty list");
      for (const auto& child : p["phases"]) {
        if (auto st = LoadPhaseEntry(child, true, *name + suffix + ".", s, names, ids); !st.ok()) return st;
      }
    } else {
      Copy copy{prefix + *name + suffix, *name, "", suffix};
      if (!prefix.empty()) {
        // Inside group "cycle#2.": ids read "cycle.flap-link_flap#2".
        const std::string group_name = prefix.substr(0, prefix.find_first_of("#."));
        const size_t hash = prefix.find('#');
        copy.id_base_prefix = group_name + ".";
        copy.id_suffix = hash == std::string::npos ? suffix : prefix.substr(hash, prefix.size() - hash - 1) + suffix;
      }
      if (auto st = LoadPhase(p, copy, s, names, ids); !st.ok()) return st;
    }
  }
  return Status::Ok();
}

Status Loader::LoadPhases(const YAML::Node& n, Scenario* s) const {
  if (!n.IsSequence() || n.size() == 0) return Error(n, "phases must be a non-empty list");
  std::set<std::string> names, ids;
  for (const auto& p : n) {
    if (auto st = LoadPhaseEntry(p, false, "", s, &names, &ids); !st.ok()) return st;
  }
  if (!s->phases.front().faults.empty()) {
    return Error(n[0], "the first phase must be fault-free: it is the baseline the report measures against");
  }
  if (s->phases.front().gate) {
    return Error(n[0], "the first phase cannot wait until stable: it is the baseline that defines stable");
  }
  if (!s->phases.back().faults.empty()) {
    return Error(n[n.size() - 1], "the last phase must be fault-free, so recovery can be measured");
  }
  return Status::Ok();
}

Status Loader::LoadExpect(const YAML::Node& n, const Scenario& s, ExpectSpec* e) const {
  if (auto st = CheckKeys(n, "expect", {"max_slowdown", "max_time_to_recover", "no_residue", "data_intact", "metrics"});
      !st.ok())
    return st;
  if (n["max_slowdown"]) {
    double v = 0;
    if (!YAML::convert<double>::decode(n["max_slowdown"], v) || v < 1) {
      return Error(n["max_slowdown"], "expect.max_slowdown must be a number >= 1 (a ratio, like 12)");
    }
    e->max_slowdown = v;
  }
  if (n["max_time_to_recover"]) {
    auto d = Dur(n["max_time_to_recover"], "expect.max_time_to_recover");
    if (!d.ok()) return d.status();
    e->max_time_to_recover_s = ToSeconds(*d);
  }
  for (auto [key, field] : {std::pair{"no_residue", &e->no_residue}, std::pair{"data_intact", &e->data_intact}}) {
    if (!n[key]) continue;
    bool b = false;
    if (!YAML::convert<bool>::decode(n[key], b)) return Error(n[key], std::string("expect.") + key + " must be true or false");
    *field = b;
  }
  if (n["metrics"]) {
    if (!n["metrics"].IsSequence()) return Error(n["metrics"], "expect.metrics must be a list of {metric, max|min, fault}");
    const auto& known = ExpectableMetrics();
    const std::set<std::string> names(known.begin(), known.end());
    for (const auto& m : n["metrics"]) {
      if (auto st = CheckKeys(m, "expect.metrics entry", {"metric", "fault", "max", "min"}); !st.ok()) return st;
      MetricLimit limit;
      if (!m["metric"]) return Error(m, "expect.metrics entry needs metric: (one of " + JoinWords(names) + ")");
      auto metric = Str(m["metric"], "metric");
      if (!metric.ok()) return metric.status();
      if (!names.count(*metric)) {
        std::string hint = DidYouMean(*metric, names);
        return Error(m["metric"], "unknown metric \"" + *metric + "\"" + (hint.empty() ? "" : "; " + hint) +
                                      " (known: " + JoinWords(names) + ")");
      }
      limit.metric = *metric;
      const bool per_fault = metric->find('.') == std::string::npos;
      if (m["fault"]) {
        if (!per_fault) return Error(m["fault"], "metric " + *metric + " is one number for the run; drop fault:");
        auto f = Str(m["fault"], "fault");
        if (!f.ok()) return f.status();
        bool found = false;
        std::set<std::string> all;
        for (const auto& p : s.phases) {
          for (const auto& x : p.faults) {
            all.insert(x.id);
            found = found || FaultRefMatches(x.id, *f);
          }
        }
        if (!found) {
          std::string hint = DidYouMean(*f, all);
          return Error(m["fault"], "no fault has id \"" + *f + "\"" + (hint.empty() ? "" : "; " + hint) +
                                       " (`fdrill plan` lists the ids)");
        }
        limit.fault = *f;
      }
      for (auto [key, field] : {std::pair{"max", &limit.max}, std::pair{"min", &limit.min}}) {
        if (!m[key]) continue;
        auto v = Number(m[key], std::string("expect.metrics ") + key);
        if (!v.ok()) return v.status();
        *field = *v;
      }
      if (!limit.max && !limit.min) return Error(m, "expect.metrics entry needs max: or min:");
      if (limit.max && limit.min && *limit.min > *limit.max) return Error(m, "expect.metrics entry: min is above max");
      e->metrics.push_back(std::move(limit));
    }
  }
  return Status::Ok();
}

Status Loader::LoadStop(const YAML::Node& n, StopSpec* stop) const {
  if (auto st = CheckKeys(n, "safety.stop", {"min_busbw", "for_iterations", "max_iteration_time", "max_wrong_elements",
                                             "max_errors"});
      !st.ok())
    return st;
  if (n["min_busbw"]) {
    auto v = Number(n["min_busbw"], "safety.stop.min_busbw");
    if (!v.ok()) return v.status();
    if (*v <= 0) return Error(n["min_busbw"], "safety.stop.min_busbw must be above 0 (GB/s, as nccl-tests' busbw)");
    stop->min_busbw_gbps = *v;
  }
  if (n["for_iterations"]) {
    auto v = Int(n["for_iterations"], "safety.stop.for_iterations", 1, 100000);
    if (!v.ok()) return v.status();
    stop->for_iterations = static_cast<int>(*v);
  }
  if (n["max_iteration_time"]) {
    auto d = Dur(n["max_iteration_time"], "safety.stop.max_iteration_time");
    if (!d.ok()) return d.status();
    stop->max_iteration_time = *d;
  }
  if (n["max_wrong_elements"]) {
    auto v = Int(n["max_wrong_elements"], "safety.stop.max_wrong_elements", 0, INT64_MAX);
    if (!v.ok()) return v.status();
    stop->max_wrong_elements = *v;
  }
  if (n["max_errors"]) {
    auto v = Int(n["max_errors"], "safety.stop.max_errors", 0, 1000000);
    if (!v.ok()) return v.status();
    stop->max_errors = static_cast<int>(*v);
  }
  return Status::Ok();
}

Status Loader::LoadSafety(const YAML::Node& n, Scenario* s) const {
  if (auto st = CheckKeys(n, "safety", {"lease_ttl", "lease_renew", "max_faulted_nodes", "stop", "blast_radius"}); !st.ok())
    return st;
  if (n["stop"]) {
    if (auto st = LoadStop(n["stop"], &s->stop); !st.ok()) return st;
  }
  if (n["blast_radius"]) {
    if (auto st = LoadBlastRadius(n["blast_radius"], s); !st.ok()) return st;
  }
  if (n["lease_ttl"]) {
    auto d = Dur(n["lease_ttl"], "safety.lease_ttl");
    if (!d.ok()) return d.status();
    s->lease_ttl = *d;
  }
  if (n["lease_renew"]) {
    auto d = Dur(n["lease_renew"], "safety.lease_renew");
    if (!d.ok()) return d.status();
    s->lease_renew = *d;
  }
  if (s->lease_renew * 2 > s->lease_ttl) {
    return Error(n, "safety.lease_renew must be at most half of safety.lease_ttl, or one lost renewal drops the lease");
  }
  if (n["max_faulted_nodes"]) {
    auto v = Int(n["max_faulted_nodes"], "safety.max_faulted_nodes", 1, 100000);
    if (!v.ok()) return v.status();
    s->max_faulted_nodes = static_cast<int>(*v);
  }
  return Status::Ok();
}

// topology: FILE, relative to the scenario's directory like fabric.hosts.
Status Loader::LoadTopologyKey(const YAML::Node& n, Scenario* s) const {
  auto path = Str(n, "topology");
  if (!path.ok()) return path.status();
  std::filesystem::path p(*path);
  if (p.is_relative()) p = std::filesystem::path(base_dir_) / p;
  auto topology = LoadTopology(p.string());
  // Named from the scenario's place, then the topology file's.
  if (!topology.ok()) return Error(n, "topology: " + topology.status().message());
  s->topology = std::move(*topology);
  return Status::Ok();
}

// safety.blast_radius: limits on what the faults in force at once reach.
Status Loader::LoadBlastRadius(const YAML::Node& n, Scenario* s) const {
  BlastRadiusSpec& b = s->blast_radius;
  const std::pair<const char*, std::optional<int>*> keys[] = {
      {"max_nodes", &b.max_nodes}, {"max_rails_per_node", &b.max_rails_per_node}, {"max_rails", &b.max_rails},
      {"max_leaves", &b.max_leaves}, {"max_nvlink_domains", &b.max_nvlink_domains}};
  std::set<std::string> allowed;
  for (const auto& [key, field] : keys) allowed.insert(key);
  if (auto st = CheckKeys(n, "safety.blast_radius", allowed); !st.ok()) return st;
  for (const auto& [key, field] : keys) {
    if (!n[key]) continue;
    if (std::string(key) != "max_nodes" && !s->topology) {
      return Error(n[key], std::string("safety.blast_radius.") + key +
                               " counts in fabric terms and needs topology: FILE (rails, leaves, NVLink domains; "
                               "see scenarios/topology.example.yaml)");
    }
    // 0 is a limit too: max_nvlink_domains 0 keeps a drill off NVLink.
    const bool nodes = std::string(key) == "max_nodes";
    auto v = Int(n[key], std::string("safety.blast_radius.") + key, nodes ? 1 : 0, 100000);
    if (!v.ok()) return v.status();
    *field = static_cast<int>(*v);
  }
  return Status::Ok();
}

// Every set of PHASE's faults in force at once within safety.blast_radius;
// the error names the fault whose apply crosses a limit, at its place.
Status Loader::CheckBlastRadius(const PhaseSpec& phase, const Scenario& s) const {
  if (!s.blast_radius.Any()) return Status::Ok();
  // Called for a message only: the phase's earliest start, every earlier
  // gate stable at its minimum.
  auto when = [&](Duration offset) {
    Duration start{};
    bool gated = false;
    for (const auto& p : s.phases) {
      start += p.duration;
      gated = gated || p.gate.has_value();
    }
    return "t" + std::string(gated ? ">=" : "=") + FormatDuration(start + offset) + " (phase " + phase.name + " +" +
           FormatDuration(offset) + ")";
  };
  const Topology* topology = s.topology ? &*s.topology : nullptr;
  const auto walk = WalkBlastRadius(phase, s.blast_radius, topology, when);
  if (!walk.violation) return Status::Ok();
  const FaultSpec& f = phase.faults[walk.violation->culprit];
  return InvalidArgument(file_ + ":" + std::to_string(f.line) + ":" + std::to_string(f.column) + ": " +
                         walk.violation->message);
}

Result<Scenario> Loader::Load(const std::string& text) {
  // Every conversion above checks its node first; a yaml-cpp exception that
  // still escapes (a case we missed) is a refusal naming the place, never a
  // crash of `fdrill run` (scenario_fuzz found one: name: {nodes: 4}).
  try {
    return LoadChecked(text);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return InvalidArgument(file_ + ": " + e.msg);
    return InvalidArgument(file_ + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                           ": " + e.msg);
  }
}

// The offset of the first byte that is not part of valid UTF-8, or npos.
// Scenario strings travel as JSON (plan.json, the wire), which must be UTF-8.
size_t FirstInvalidUtf8(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > text.size()) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return i;
    }
    // Overlong two-byte forms (C0, C1) and code points past U+10FFFF.
    if (c == 0xC0 || c == 0xC1 || c > 0xF4) return i;
    i += len;
  }
  return std::string::npos;
}

Result<Scenario> Loader::LoadChecked(const std::string& text) {
  if (size_t bad = FirstInvalidUtf8(text); bad != std::string::npos) {
    const size_t line_start = text.rfind('\n', bad == 0 ? 0 : bad - 1);
    const size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(bad), '\n')) + 1;
    const size_t column = line_start == std::string::npos || bad == 0 ? bad + 1 : bad - line_start;
    return InvalidArgument(file_ + ":" + std::to_string(line) + ":" + std::to_string(column) +
                           ": not valid UTF-8 (a scenario is UTF-8 text)");
  }
  auto parsed = LoadYaml(file_, text);
  if (!parsed.ok()) return parsed.status();
  const YAML::Node root = *parsed;
  Scenario s;
  s.file = file_;
  s.text = text;
  if (!root.IsMap()) return InvalidArgument(file_ + ": a scenario is a YAML mapping (name, fabric, workload, phases, ...)");
  if (auto st = CheckKeys(root, "the scenario",
                          {"name", "description", "fabric", "topology", "targets", "workload", "phases", "safety", "expect",
                           "analysis"});
      !st.ok())
    return st;
  if (!root["name"]) return InvalidArgument(file_ + ": the scenario needs a name");
  auto name = Str(root["name"], "name");
  if (!name.ok()) return name.status();
  s.name = *name;
  if (root["description"]) {
    auto d = Str(root["description"], "description");
    if (!d.ok()) return d.status();
    s.description = *d;
  }
  if (!root["fabric"]) return InvalidArgument(file_ + ": the scenario needs fabric: {emulated: {nodes: N}}, {hosts: FILE} or {slurm: true}");
  if (auto st = LoadFabric(root["fabric"], &s); !st.ok()) return st;
  if (root["topology"]) {
    if (auto st = LoadTopologyKey(root["topology"], &s); !st.ok()) return st;
  }
  if (root["targets"]) {
    if (auto st = LoadTargets(root["targets"], s); !st.ok()) return st;
  }
  if (root["workload"]) {
    if (auto st = LoadWorkload(root["workload"], &s.workload); !st.ok()) return st;
    if (auto st = LoadExternal(root["workload"], s, &s.workload); !st.ok()) return st;
  }
  if (root["safety"]) {
    if (auto st = LoadSafety(root["safety"], &s); !st.ok()) return st;
  }
  if (!root["phases"]) return InvalidArgument(file_ + ": the scenario needs phases");
  if (auto st = LoadPhases(root["phases"], &s); !st.ok()) return st;
  if (root["expect"]) {
    if (auto st = LoadExpect(root["expect"], s, &s.expect); !st.ok()) return st;
  }
  if (root["analysis"]) {
    if (auto st = CheckKeys(root["analysis"], "analysis", {"recovery_window"}); !st.ok()) return st;
    if (root["analysis"]["recovery_window"]) {
      auto w = Int(root["analysis"]["recovery_window"], "analysis.recovery_window", 1, 1000);
      if (!w.ok()) return w.status();
      s.recovery_window_iters = static_cast<int>(*w);
    }
  }
  if (s.workload.output == "none") {
    // A command whose output is not read reports no iterations: anything
    // that waits for or measures them could never be met.
    const YAML::Node w = root["workload"];
    const YAML::Node at = w["output"] ? w["output"] : w["command"];
    std::string needs;
    for (const auto& p : s.phases) {
      if (p.gate && needs.empty()) needs = "phase " + p.name + "'s until: stable";
    }
    if (needs.empty() && (s.stop.min_busbw_gbps || s.stop.max_iteration_time)) needs = "safety.stop's busbw and iteration-time conditions";
    if (needs.empty() && s.workload.restart.hang_timeout) needs = "workload.restart.hang_timeout";
    if (needs.empty() && (s.expect.max_slowdown || s.expect.max_time_to_recover_s)) needs = "expect's max_slowdown and max_time_to_recover";
    if (!needs.empty()) {
      return Error(at, "workload.output none: the drill sees no iterations of this command, so " + needs +
                           " can never be measured; use output: nccl-tests (a *_perf binary) or drop it");
    }
  }
  return s;
}

}  // namespace

Duration Scenario::TotalDuration() const {
  Duration total{};
  for (const auto& p : phases) total += p.MaxDuration();
  return total;
}

std::vector<std::string> Scenario::NodeNames() const {
  if (!Emulated()) return host_names;
  std::vector<std::string> out;
  for (int i = 0; i < nodes; ++i) out.push_back("n" + std::to_string(i));
  return out;
}

std::string Scenario::FabricName() const {
  if (slurm) return "Slurm allocation " + slurm_nodelist;
  if (!hosts_file.empty()) return "hosts file " + hosts_file;
  return "emulated n0..n" + std::to_string(nodes - 1);
}

const std::vector<std::string>& ExpectableMetrics() {
  static const std::vector<std::string> kNames(kExpectableMetrics.begin(), kExpectableMetrics.end());
  return kNames;
}

Result<Scenario> ParseScenario(const std::string& text, const std::string& file_name, const std::string& base_dir) {
  Loader loader(file_name);
  loader.base_dir_ = base_dir;
  return loader.Load(text);
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open the scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto dir = std::filesystem::path(path).parent_path();
  return ParseScenario(ss.str(), path, dir.empty() ? "." : dir.string());
}

}  // namespace fdrill
