// The only file that includes yaml-cpp. Every mapping is checked against the
// keys it may hold, so a typo is an error with file:line:col and a hint, never
// a silently ignored setting.
#include <algorithm>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "harness/scenario/scenario.h"
#include "injectors/injector.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  Status Error(const YAML::Node& at, const std::string& what) const {
    auto m = at.Mark();
    std::string where = file_;
    if (m.line >= 0) where += ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
    return InvalidArgument(where + ": " + what);
  }

  Status CheckKeys(const YAML::Node& map, const std::string& section, const std::set<std::string>& allowed) const {
    if (!map.IsMap()) return Error(map, section + " must be a mapping");
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) return Error(kv.first, "a key in " + section + " must be a plain word, not a mapping or list");
      std::string key = kv.first.as<std::string>();
      if (allowed.count(key)) continue;
      std::string hint = DidYouMean(key, allowed);
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Error(kv.first, "unknown key \"" + key + "\" in " + section + (hint.empty() ? "" : "; " + hint) +
                                 " (allowed: " + list + ")");
    }
    return Status::Ok();
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

  Result<Duration> Dur(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) return Error(n, key + " must be a duration like 15s");
    auto d = ParseDuration(n.as<std::string>());
    if (!d.ok()) return Error(n, key + ": " + d.status().message());
    if (d->count() <= 0) return Error(n, key + " must be greater than zero");
    return *d;
  }

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

  Status LoadWorkload(const YAML::Node& n, WorkloadSpec* w) const;
  Status LoadPhases(const YAML::Node& n, Scenario* s) const;
  Status LoadFault(const YAML::Node& n, const PhaseSpec& phase, size_t index, const Scenario& s,
                   FaultSpec* f) const;
  Status LoadExpect(const YAML::Node& n, ExpectSpec* e) const;
  Status LoadSafety(const YAML::Node& n, Scenario* s) const;
  Result<Scenario> Load(const std::string& text) const;
  Result<Scenario> LoadChecked(const std::string& text) const;

 private:
  std::string file_;
};

Status Loader::LoadWorkload(const YAML::Node& n, WorkloadSpec* w) const {
  if (auto s = CheckKeys(n, "workload", {"op", "dtype", "size", "ranks_per_node", "backend", "warmup"}); !s.ok())
    return s;
  if (n["op"]) {
    auto op = Str(n["op"], "workload.op");
    if (!op.ok()) return op.status();
    if (*op != "all_reduce") return Error(n["op"], "workload.op \"" + *op + "\" is not supported yet; use all_reduce");
    w->op = *op;
  }
  if (n["dtype"]) {
    auto d = Str(n["dtype"], "workload.dtype");
    if (!d.ok()) return d.status();
    if (*d != "float32") return Error(n["dtype"], "workload.dtype \"" + *d + "\" is not supported yet; use float32");
    w->dtype = *d;
  }
  if (n["size"]) {
    auto text = Str(n["size"], "workload.size");
    if (!text.ok()) return text.status();
    auto sz = ParseSizeBytes(*text);
    if (!sz.ok()) return Error(n["size"], "workload.size: " + sz.status().message());
    if (*sz == 0 || *sz % 4 != 0) return Error(n["size"], "workload.size must be a positive multiple of 4 bytes");
    w->size_bytes = *sz;
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
  if (n["backend"]) {
    auto b = Str(n["backend"], "workload.backend");
    if (!b.ok()) return b.status();
    if (*b != "mpi" && *b != "nccl") return Error(n["backend"], "workload.backend must be mpi or nccl");
    w->backend = *b;
  }
  return Status::Ok();
}

Status Loader::LoadFault(const YAML::Node& n, const PhaseSpec& phase, size_t index, const Scenario& s,
                         FaultSpec* f) const {
  if (auto st = CheckKeys(n, "fault", {"id", "kind", "node", "params", "max_duration"}); !st.ok()) return st;
  f->line = n.Mark().line + 1;
  if (!n["kind"]) return Error(n, "fault needs a kind (one of the names `fdrill injectors` lists)");
  if (!n["node"]) return Error(n, "fault needs a node (n0..n" + std::to_string(s.nodes - 1) + ")");
  auto kind = Str(n["kind"], "kind");
  if (!kind.ok()) return kind.status();
  f->kind = *kind;
  auto node = Str(n["node"], "node");
  if (!node.ok()) return node.status();
  auto names = s.NodeNames();
  if (std::find(names.begin(), names.end(), *node) == names.end()) {
    return Error(n["node"], "node \"" + *node + "\" does not exist; this drill's fabric has n0..n" +
                                std::to_string(s.nodes - 1));
  }
  f->node = *node;
  f->id = phase.name + "-" + f->kind + (index ? std::to_string(index) : "");
  if (n["id"]) {
    auto id = Str(n["id"], "fault id");
    if (!id.ok()) return id.status();
    f->id = *id;
  }
  f->params = n["params"] ? ToJson(n["params"]) : Json::object();
  f->max_duration = phase.duration + s.lease_ttl;
  if (n["max_duration"]) {
    auto d = Dur(n["max_duration"], "max_duration");
    if (!d.ok()) return d.status();
    if (*d < phase.duration) {
      return Error(n["max_duration"], "fault max_duration " + FormatDuration(*d) + " is shorter than its phase (" +
                                          FormatDuration(phase.duration) + "); the agent would revert it early");
    }
    f->max_duration = *d;
  }
  // The injector's own parser validates params; nothing is touched.
  auto made = MakeFault(f->kind, f->params, Host{});
  if (!made.ok()) {
    const YAML::Node& at = n["params"] ? n["params"] : n["kind"];
    return Error(at, "fault " + f->id + ": " + made.status().message());
  }
  return Status::Ok();
}

Status Loader::LoadPhases(const YAML::Node& n, Scenario* s) const {
  if (!n.IsSequence() || n.size() == 0) return Error(n, "phases must be a non-empty list");
  std::set<std::string> names, ids;
  for (const auto& p : n) {
    if (auto st = CheckKeys(p, "phase", {"name", "duration", "faults"}); !st.ok()) return st;
    PhaseSpec phase;
    if (!p["name"]) return Error(p, "phase needs a name");
    auto name = Str(p["name"], "phase name");
    if (!name.ok()) return name.status();
    phase.name = *name;
    if (!names.insert(phase.name).second) return Error(p["name"], "phase name \"" + phase.name + "\" is used twice");
    if (!p["duration"]) return Error(p, "phase " + phase.name + " needs a duration (like 15s)");
    auto d = Dur(p["duration"], "duration");
    if (!d.ok()) return d.status();
    phase.duration = *d;
    if (p["faults"]) {
      if (!p["faults"].IsSequence()) return Error(p["faults"], "faults must be a list");
      std::set<std::string> nodes;
      for (size_t i = 0; i < p["faults"].size(); ++i) {
        FaultSpec f;
        if (auto st = LoadFault(p["faults"][i], phase, i, *s, &f); !st.ok()) return st;
        if (!ids.insert(f.id).second) return Error(p["faults"][i], "fault id \"" + f.id + "\" is used twice");
        nodes.insert(f.node);
        phase.faults.push_back(std::move(f));
      }
      if (static_cast<int>(nodes.size()) > s->max_faulted_nodes) {
        return Error(p["faults"], "phase " + phase.name + " faults " + std::to_string(nodes.size()) +
                                      " nodes at once; safety.max_faulted_nodes allows " +
                                      std::to_string(s->max_faulted_nodes));
      }
    }
    s->phases.push_back(std::move(phase));
  }
  if (!s->phases.front().faults.empty()) {
    return Error(n[0], "the first phase must be fault-free: it is the baseline the report measures against");
  }
  if (!s->phases.back().faults.empty()) {
    return Error(n[n.size() - 1], "the last phase must be fault-free, so recovery can be measured");
  }
  return Status::Ok();
}

Status Loader::LoadExpect(const YAML::Node& n, ExpectSpec* e) const {
  if (auto s = CheckKeys(n, "expect", {"max_slowdown", "max_time_to_recover", "no_residue", "data_intact"}); !s.ok())
    return s;
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
  return Status::Ok();
}

Status Loader::LoadSafety(const YAML::Node& n, Scenario* s) const {
  if (auto st = CheckKeys(n, "safety", {"lease_ttl", "lease_renew", "max_faulted_nodes"}); !st.ok()) return st;
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

Result<Scenario> Loader::Load(const std::string& text) const {
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

Result<Scenario> Loader::LoadChecked(const std::string& text) const {
  if (size_t bad = FirstInvalidUtf8(text); bad != std::string::npos) {
    const size_t line_start = text.rfind('\n', bad == 0 ? 0 : bad - 1);
    const size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(bad), '\n')) + 1;
    const size_t column = line_start == std::string::npos || bad == 0 ? bad + 1 : bad - line_start;
    return InvalidArgument(file_ + ":" + std::to_string(line) + ":" + std::to_string(column) +
                           ": not valid UTF-8 (a scenario is UTF-8 text)");
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return InvalidArgument(file_ + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                           ": not valid YAML: " + e.msg);
  }
  Scenario s;
  s.file = file_;
  s.text = text;
  if (!root.IsMap()) return InvalidArgument(file_ + ": a scenario is a YAML mapping (name, fabric, workload, phases, ...)");
  if (auto st = CheckKeys(root, "the scenario",
                          {"name", "description", "fabric", "workload", "phases", "safety", "expect", "analysis"});
      !st.ok())
    return st;
  if (!root["name"]) return InvalidArgument(file_ + ": the scenario needs a name");
  auto name = Str(root["name"], "name");
  if (!name.ok()) return name.status();
  s.name = *name;
  if (!root["fabric"]) return InvalidArgument(file_ + ": the scenario needs fabric: {emulated: {nodes: N}}");
  if (auto st = CheckKeys(root["fabric"], "fabric", {"emulated"}); !st.ok()) return st;
  const YAML::Node em = root["fabric"]["emulated"];
  if (!em) return Error(root["fabric"], "fabric needs emulated: {nodes: N}");
  if (auto st = CheckKeys(em, "fabric.emulated", {"nodes"}); !st.ok()) return st;
  if (!em["nodes"]) return Error(em, "fabric.emulated needs nodes");
  auto nodes = Int(em["nodes"], "fabric.emulated.nodes", 2, 200);
  if (!nodes.ok()) return nodes.status();
  s.nodes = static_cast<int>(*nodes);
  if (root["workload"]) {
    if (auto st = LoadWorkload(root["workload"], &s.workload); !st.ok()) return st;
  }
  if (root["safety"]) {
    if (auto st = LoadSafety(root["safety"], &s); !st.ok()) return st;
  }
  if (!root["phases"]) return InvalidArgument(file_ + ": the scenario needs phases");
  if (auto st = LoadPhases(root["phases"], &s); !st.ok()) return st;
  if (root["expect"]) {
    if (auto st = LoadExpect(root["expect"], &s.expect); !st.ok()) return st;
  }
  if (root["analysis"]) {
    if (auto st = CheckKeys(root["analysis"], "analysis", {"recovery_window"}); !st.ok()) return st;
    if (root["analysis"]["recovery_window"]) {
      auto w = Int(root["analysis"]["recovery_window"], "analysis.recovery_window", 1, 1000);
      if (!w.ok()) return w.status();
      s.recovery_window_iters = static_cast<int>(*w);
    }
  }
  return s;
}

}  // namespace

Duration Scenario::TotalDuration() const {
  Duration total{};
  for (const auto& p : phases) total += p.duration;
  return total;
}

std::vector<std::string> Scenario::NodeNames() const {
  std::vector<std::string> out;
  for (int i = 0; i < nodes; ++i) out.push_back("n" + std::to_string(i));
  return out;
}

Result<Scenario> ParseScenario(const std::string& text, const std::string& file_name) {
  return Loader(file_name).Load(text);
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open the scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseScenario(ss.str(), path);
}

}  // namespace fdrill
