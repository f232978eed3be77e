// workload: what runs during the drill — fdrill-collective's op, size and
// ranks, mode: train with its restart policy, or a command of the
// operator's own (its step lines, framework, restart policy, and on a real
// cluster its launcher).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "common/core/did_you_mean.h"
#include "harness/scenario/load_sections.h"
#include "harness/scenario/selector.h"
#include "harness/scenario/yaml_errors.h"
#include "workloads/path_template.h"
#include "workloads/step_lines.h"

namespace fdrill {

namespace {

// What fdrill-collective accepts (workloads/collective.h ParseOp and
// friends are the authority; tests/scenario checks these lists against them).
const std::set<std::string> kOps = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                    "reduce",     "alltoall",   "sendrecv"};
const std::map<std::string, int> kDTypeBytes = {
    {"float32", 4}, {"float64", 8}, {"int32", 4}, {"float16", 2}, {"bfloat16", 2}};
const std::set<std::string> kRedOps = {"sum", "prod", "min", "max"};

// WHERE.KEY (workload.KEY, workloads.NAME.KEY), when given, one of `allowed` (else "did you mean").
Status Word(const YamlReader& y, const YAML::Node& n, const std::string& where, const char* key,
            const std::set<std::string>& allowed, std::string* out) {
  if (!n[key]) return Status::Ok();
  auto v = y.Str(n[key], where + "." + key);
  if (!v.ok()) return v.status();
  if (!allowed.count(*v)) {
    std::string hint = DidYouMean(*v, allowed);
    return y.Error(n[key], where + "." + key + " \"" + *v + "\" is not one of " +
                               JoinWords(allowed) + (hint.empty() ? "" : "; " + hint));
  }
  *out = *v;
  return Status::Ok();
}

// restart: {max_restarts, backoff, hang_timeout}.
Status LoadRestart(const YamlReader& y, const YAML::Node& r, const std::string& where,
                   RestartSpec* out) {
  if (auto st = y.CheckKeys(r, where + ".restart", {"max_restarts", "backoff", "hang_timeout"});
      !st.ok())
    return st;
  if (r["max_restarts"]) {
    auto m = y.Int(r["max_restarts"], where + ".restart.max_restarts", 0, 100);
    if (!m.ok()) return m.status();
    out->max_restarts = static_cast<int>(*m);
  }
  if (r["backoff"]) {
    auto d = y.Dur(r["backoff"], where + ".restart.backoff");
    if (!d.ok()) return d.status();
    out->backoff = *d;
  }
  if (r["hang_timeout"]) {
    auto d = y.Dur(r["hang_timeout"], where + ".restart.hang_timeout");
    if (!d.ok()) return d.status();
    out->hang_timeout = *d;
  }
  return Status::Ok();
}

// mode, steps, checkpoint_every and the restart policy: mode: train's, or
// a command's (its own checkpoint interval, and how it is relaunched).
Status LoadTrain(const YamlReader& y, const YAML::Node& n, const std::string& where,
                 WorkloadSpec* w) {
  if (n["mode"]) {
    auto m = y.Str(n["mode"], where + ".mode");
    if (!m.ok()) return m.status();
    if (*m != "sweep" && *m != "train")
      return y.Error(n["mode"], where + ".mode must be sweep (the default) or train");
    w->mode = *m;
  }
  if (!w->Train() && n["command"]) {
    if (n["steps"]) {
      return y.Error(n["steps"], where +
                                     ".steps is mode: train's; a command runs as many steps as "
                                     "its own arguments say");
    }
    if (n["checkpoint_every"]) {
      auto every = y.Int(n["checkpoint_every"], where + ".checkpoint_every", 1, int64_t{1} << 40);
      if (!every.ok()) return every.status();
      w->checkpoint_every = *every;
    }
    return n["restart"] ? LoadRestart(y, n["restart"], where, &w->restart) : Status::Ok();
  }
  if (!w->Train()) {
    for (const char* key : {"steps", "checkpoint_every", "restart"}) {
      if (n[key]) {
        return y.Error(n[key], where + "." + key +
                                   " needs mode: train (a restart resumes from the checkpoint the "
                                   "training loop writes) or a command of your own");
      }
    }
    return Status::Ok();
  }
  if (!n["steps"] || !n["checkpoint_every"]) {
    return y.Error(n,
                   "mode: train needs steps: N and checkpoint_every: K (like steps: 2000, "
                   "checkpoint_every: 50)");
  }
  auto steps = y.Int(n["steps"], where + ".steps", 1, int64_t{1} << 40);
  if (!steps.ok()) return steps.status();
  w->steps = *steps;
  auto every = y.Int(n["checkpoint_every"], where + ".checkpoint_every", 1, w->steps);
  if (!every.ok()) return every.status();
  w->checkpoint_every = *every;
  return n["restart"] ? LoadRestart(y, n["restart"], where, &w->restart) : Status::Ok();
}

Status LoadCollective(const YamlReader& y, const YAML::Node& n, const std::string& where,
                      WorkloadSpec* w) {
  std::set<std::string> keys = {
      "mode",           "op",        "dtype",   "redop",     "size",
      "ranks_per_node", "backend",   "warmup",  "steps",     "checkpoint_every",
      "restart",        "command",   "output",  "launcher",  "launcher_args",
      "rsh_agent",      "transport", "metrics", "framework", "lineup"};
  if (where != "workload") {  // a tenant's (LoadTenants reads them)
    keys.insert("nodes");
    keys.insert("start");
  }
  if (auto s = y.CheckKeys(n, where, keys); !s.ok()) return s;
  if (auto st = LoadTrain(y, n, where, w); !st.ok()) return st;
  std::set<std::string> dtypes;
  for (const auto& [d, bytes] : kDTypeBytes) dtypes.insert(d);
  if (w->Train()) {
    // fdrill-collective --train all-reduces (sum) a float64 state.
    for (const char* key : {"op", "dtype", "redop", "warmup", "lineup"}) {
      if (n[key])
        return y.Error(n[key], where + "." + key +
                                   " is fixed in mode: train (all_reduce, float64, sum, no "
                                   "warm-up, steps back to back); drop it");
    }
    w->dtype = "float64";
  }
  if (auto st = Word(y, n, where, "op", kOps, &w->op); !st.ok()) return st;
  if (auto st = Word(y, n, where, "dtype", dtypes, &w->dtype); !st.ok()) return st;
  if (auto st = Word(y, n, where, "redop", kRedOps, &w->redop); !st.ok()) return st;
  if (n["redop"] && !w->Reduces()) {
    return y.Error(n["redop"], where + ".redop: " + w->op + " does not reduce; drop redop");
  }
  if (auto st = Word(y, n, where, "backend", {"mpi", "nccl"}, &w->backend); !st.ok()) return st;
  if (auto st = Word(y, n, where, "lineup", {"barrier", "none"}, &w->lineup); !st.ok()) return st;
  if (auto st = Word(y, n, where, "transport", {"auto", "tcp", "rdma"}, &w->transport); !st.ok())
    return st;
  if (n["size"]) {
    auto text = y.Str(n["size"], where + ".size");
    if (!text.ok()) return text.status();
    // Per rank and buffer: a byte to 32GiB, more than one GPU's memory
    // holds with its output buffer beside it.
    auto sz = ParseSizeBytes(*text, {1, uint64_t{32} << 30});
    if (!sz.ok()) return y.Error(n["size"], where + ".size: " + sz.status().message());
    w->size_bytes = *sz;
  }
  const int elem = kDTypeBytes.at(w->dtype);
  if (w->size_bytes == 0 || w->size_bytes % static_cast<uint64_t>(elem) != 0) {
    return y.Error(n["size"] ? n["size"] : n, where + ".size must be a positive multiple of " +
                                                  std::to_string(elem) + " bytes (one " + w->dtype +
                                                  ")");
  }
  if (n["ranks_per_node"]) {
    auto r = y.Int(n["ranks_per_node"], where + ".ranks_per_node", 1, 64);
    if (!r.ok()) return r.status();
    w->ranks_per_node = static_cast<int>(*r);
  }
  if (n["warmup"]) {
    auto r = y.Int(n["warmup"], where + ".warmup", 0, 1000);
    if (!r.ok()) return r.status();
    w->warmup = static_cast<int>(*r);
  }
  return Status::Ok();
}

// metrics: PRESET, {preset: PRESET} or {pattern: REGEX}: the command's
// step lines, checked here as `fdrill job-rank` will read them; or file:
// the job writes its own records to $FDRILL_METRICS (workloads/job_rank.h).
Status LoadMetrics(const YamlReader& y, const YAML::Node& m, WorkloadSpec* w) {
  const std::string presets =
      JoinWords(std::set<std::string>(StepLinePresets().begin(), StepLinePresets().end()));
  if (m.IsScalar() && m.as<std::string>() == "file") {
    w->metrics_file = true;
    w->output = "steps";
    return Status::Ok();
  }
  if (m.IsScalar()) {
    w->metrics_preset = m.as<std::string>();
  } else if (m.IsMap()) {
    if (auto st = y.CheckKeys(m, "workload.metrics", {"preset", "pattern"}); !st.ok()) return st;
    if ((m["preset"] ? 1 : 0) + (m["pattern"] ? 1 : 0) != 1) {
      return y.Error(m, "workload.metrics takes one of preset: (" + presets +
                            ") or pattern: (a regular expression with a (?<step>...) group)");
    }
    for (auto [key, out] :
         {std::pair{"preset", &w->metrics_preset}, std::pair{"pattern", &w->metrics_pattern}}) {
      if (!m[key]) continue;
      auto v = y.Str(m[key], std::string("workload.metrics.") + key);
      if (!v.ok()) return v.status();
      *out = *v;
    }
  } else {
    return y.Error(m, "workload.metrics must be a preset's name (" + presets +
                          ") or {pattern: REGEX} with a (?<step>...) group");
  }
  auto reader = StepLineReader::Make(w->metrics_preset, w->metrics_pattern);
  if (!reader.ok()) {
    const YAML::Node at = m.IsMap() ? (m["preset"] ? m["preset"] : m["pattern"]) : m;
    return y.Error(at, "workload.metrics: " + reader.status().message());
  }
  w->output = "steps";
  return Status::Ok();
}

// command, output, metrics, framework, launcher, launcher_args, rsh_agent:
// the operator's own job (scenario.h WorkloadSpec). On the emulated fabric
// a command runs under the fabric's own mpirun line, so the launcher keys
// are a real cluster's only.
Status LoadExternal(const YamlReader& y, const YAML::Node& n, const Scenario& s, WorkloadSpec* w) {
  if (s.Emulated()) {
    for (const char* key : {"launcher", "launcher_args", "rsh_agent"}) {
      if (n[key]) {
        return y.Error(n[key], std::string("workload.") + key +
                                   " is for a real cluster (fabric: {hosts: FILE} or "
                                   "{slurm: true}); the emulated fabric starts a command with its "
                                   "own mpirun line (ranks_per_node ranks on every node)");
      }
    }
  }
  // {scenario_dir}: the scenario file's directory, absolute (a script
  // shipped beside the drill; every rank's working directory differs).
  std::string scenario_dir = std::filesystem::absolute(y.Resolve(".")).lexically_normal().string();
  if (scenario_dir.size() > 1 && scenario_dir.back() == '/') scenario_dir.pop_back();
  auto list = [&](const char* key, std::vector<std::string>* out) -> Status {
    if (!n[key]) return Status::Ok();
    if (!n[key].IsSequence() || n[key].size() == 0) {
      return y.Error(n[key],
                     std::string("workload.") + key +
                         " must be a list of words, like [all_reduce_perf, -b, 1G, -e, 1G, -N, 0]");
    }
    for (const auto& e : n[key]) {
      auto v = y.Str(e, std::string("workload.") + key);
      if (!v.ok()) return v.status();
      std::string word = *v;
      ReplaceAll(&word, "{scenario_dir}", scenario_dir);
      out->push_back(word);
    }
    return Status::Ok();
  };
  if (auto st = list("command", &w->command); !st.ok()) return st;
  if (auto st = list("launcher_args", &w->launcher_args); !st.ok()) return st;
  if (auto st = Word(y, n, "workload", "launcher", {"mpirun", "srun", "none"}, &w->launcher);
      !st.ok())
    return st;
  if (w->External()) {
    if (n["lineup"]) {
      return y.Error(n["lineup"],
                     "workload.lineup frames fdrill-collective's iterations; a command of your "
                     "own runs its own loop: drop lineup");
    }
    // nccl-tests binaries are all <collective>_perf; anything else reports no iterations unless
    // told.
    const std::string base = std::filesystem::path(w->command.front()).filename().string();
    w->output =
        base.size() > 5 && base.compare(base.size() - 5, 5, "_perf") == 0 ? "nccl-tests" : "none";
    if (n["metrics"] && n["output"]) {
      return y.Error(n["output"],
                     "workload.output and workload.metrics both say how the command's output is "
                     "read; metrics: reads its step lines, so drop output");
    }
    if (n["metrics"]) {
      if (auto st = LoadMetrics(y, n["metrics"], w); !st.ok()) return st;
    }
    if (auto st = Word(y, n, "workload", "output", {"nccl-tests", "none"}, &w->output); !st.ok())
      return st;
    if (auto st = Word(y, n, "workload", "framework", {"pytorch"}, &w->framework); !st.ok())
      return st;
    if (w->Train())
      return y.Error(n["mode"],
                     "workload.mode: train runs fdrill-collective (its digest is checked); drop "
                     "command or mode");
    if (w->launcher == "none" && (!w->framework.empty() || w->metrics_file)) {
      return y.Error(n["launcher"],
                     "workload.launcher none: framework and metrics: file need each rank under "
                     "fdrill job-rank (launcher mpirun or srun); a launcher of your own "
                     "(torchrun) sets the rank variables itself, and metrics: PRESET or "
                     "{pattern: ...} reads its step lines from its output");
    }
    const bool shared_checkpoint = std::any_of(
        w->command.begin(), w->command.end(),
        [](const std::string& word) { return word.find("{checkpoint_dir}") != std::string::npos; });
    if (shared_checkpoint && !s.Emulated()) {
      return y.Error(n["command"],
                     "workload.command: {checkpoint_dir} is a directory every node shares on the "
                     "emulated fabric only; on a real cluster name a path on a filesystem every "
                     "rank that reads the checkpoint mounts");
    }
  } else {
    for (const char* key : {"output", "metrics", "framework"}) {
      if (n[key]) {
        return y.Error(n[key], std::string("workload.") + key +
                                   " describes a command of your own; without command the "
                                   "workload is fdrill-collective");
      }
    }
  }
  if (w->launcher == "srun" && !s.slurm) {
    return y.Error(n["launcher"],
                   "workload.launcher srun runs a job step inside the allocation: use fabric: "
                   "{slurm: true}, or launcher: mpirun");
  }
  if (n["rsh_agent"]) {
    if (w->launcher != "mpirun")
      return y.Error(n["rsh_agent"],
                     "workload.rsh_agent is mpirun's (plm_rsh_agent); launcher is " + w->launcher);
    auto v = y.Str(n["rsh_agent"], "workload.rsh_agent");
    if (!v.ok()) return v.status();
    if (v->empty())
      return y.Error(n["rsh_agent"], "workload.rsh_agent must name a command, like ssh or rsh");
    w->rsh_agent = *v;
  }
  if (w->launcher == "none" && !w->External()) {
    return y.Error(
        n["launcher"],
        "workload.launcher none runs a command that starts itself; it needs workload.command");
  }
  return Status::Ok();
}

}  // namespace

Status LoadWorkload(const YamlReader& y, const YAML::Node& n, Scenario* s) {
  if (auto st = LoadCollective(y, n, "workload", &s->workload); !st.ok()) return st;
  return LoadExternal(y, n, *s, &s->workload);
}

// workloads: NAME -> {nodes: SELECTOR, op, size, ...}: tenants sharing the
// fabric. Each runs fdrill-collective's sweep on its own nodes, launched by
// its first node's agent; what a single workload: may add (mode: train, a
// restart policy, a real cluster's command) is one job's and is refused.
Status LoadTenants(const YamlReader& y, const YAML::Node& n, Scenario* s) {
  if (!n.IsMap() || n.size() == 0) {
    return y.Error(n,
                   "workloads must map each tenant's name to its job, like "
                   "{a: {nodes: \"n[0-3]\"}, b: {nodes: \"n[4-7]\", op: alltoall}}");
  }
  if (!s->Emulated()) {
    return y.Error(n,
                   "workloads (several tenants) runs on the emulated fabric; a drill on a "
                   "hosts file or Slurm allocation has one workload:");
  }
  std::map<std::string, std::string> owner;  // node -> tenant
  const std::vector<std::string> inventory = s->NodeNames();
  for (const auto& entry : n) {
    auto name = y.Str(entry.first, "workloads key");
    if (!name.ok()) return name.status();
    const bool word = !name->empty() && std::all_of(name->begin(), name->end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    if (!word) {
      return y.Error(entry.first, "workload name \"" + *name +
                                      "\" must be letters, digits, _ or - (it tags metrics and "
                                      "names the summary's workloads.<name>)");
    }
    const std::string where = "workloads." + *name;
    const YAML::Node w = entry.second;
    if (!w.IsMap())
      return y.Error(w, where + " must be a mapping with nodes: and the job's settings");
    for (const char* key : {"mode", "steps", "checkpoint_every", "restart", "command", "output",
                            "launcher", "launcher_args", "rsh_agent", "metrics", "framework"}) {
      if (w[key]) {
        return y.Error(w[key], where + "." + key +
                                   ": tenants run fdrill-collective sweeps; mode: train, restart "
                                   "and command are for a drill with one workload:");
      }
    }
    if (!w["nodes"]) {
      return y.Error(w, where +
                            " needs nodes: (a hostlist like \"n[0-3]\" or a list of names; "
                            "no node in two tenants)");
    }
    WorkloadSpec spec;
    spec.name = *name;
    auto exprs = y.StrList(w["nodes"], where + ".nodes");
    if (!exprs.ok()) return exprs.status();
    auto nodes = SelectNodes(*exprs, inventory);
    if (!nodes.ok()) return y.Error(w["nodes"], where + ".nodes: " + nodes.status().message());
    for (const auto& node : *nodes) {
      auto [at, fresh] = owner.emplace(node, *name);
      if (!fresh) {
        return y.Error(w["nodes"], where + ".nodes: " + node + " is already workload " +
                                       at->second + "'s; tenants share the fabric, not nodes");
      }
    }
    spec.nodes = *nodes;
    if (w["start"]) {
      auto start = y.Str(w["start"], where + ".start");
      if (!start.ok()) return start.status();
      if (s->tenants.empty()) {
        return y.Error(w["start"], where +
                                       ".start: the first workload is the one the drill "
                                       "measures against its baseline; it runs from the "
                                       "start (list the late one second)");
      }
      spec.start = *start;  // a phase's name: checked once the phases are loaded
    }
    if (auto st = LoadCollective(y, w, where, &spec); !st.ok()) return st;
    s->tenants.push_back(std::move(spec));
  }
  s->workload = s->tenants.front();
  return Status::Ok();
}

}  // namespace fdrill
