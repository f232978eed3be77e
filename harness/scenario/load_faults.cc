#include "harness/scenario/load_faults.h"

#include <algorithm>
#include <set>

#include "common/core/did_you_mean.h"
#include "common/core/ipv4.h"
#include "common/core/json.h"
#include "harness/scenario/selector.h"
#include "injectors/injector.h"

namespace fdrill {

Status FaultLoader::Load(const YAML::Node& n, const PhaseSpec& phase, size_t index,
                         const PhaseCopy& copy, std::vector<FaultSpec>* out) const {
  if (auto st = y_.CheckKeys(n, "fault",
                             {"id", "kind", "node", "target", "switch", "params", "at", "for",
                              "ramp", "max_duration"});
      !st.ok()) {
    return st;
  }
  if (!n["kind"])
    return y_.Error(n, "fault needs a kind (one of the names `fdrill injectors` lists)");
  auto kind = y_.Str(n["kind"], "kind");
  if (!kind.ok()) return kind.status();
  auto target = Select(n);
  if (!target.ok()) return target.status();
  auto params = Params(n, *target);
  if (!params.ok()) return params.status();
  if (n["switch"]) {
    if (auto st = CheckSwitchFault(n, *kind, *params); !st.ok()) return st;
  } else if (const InjectorInfo* info = FindInjector(*kind);
             info != nullptr &&
             (info->on_switch == OnSwitch::kPortOnly || info->on_switch == OnSwitch::kWhole)) {
    const char* twin = info->node_kind;
    return y_.Error(n["kind"], *kind +
                                   " acts on a switch of the emulated fabric: name it with "
                                   "switch: (like switch: rail0-leaf0), not node:" +
                                   (twin ? std::string(" (on a node's interface: ") + twin + ")"
                                         : std::string()));
  }
  auto window = LoadWindow(n, phase);
  if (!window.ok()) return window.status();
  Ramp ramp;
  if (auto st = LoadRamp(n, *params, *window, &ramp); !st.ok()) return st;
  auto id = BaseId(n, *kind, index, copy);
  if (!id.ok()) return id.status();
  const size_t first = out->size();
  if (auto st = Expand(n, *kind, *target, *params, *window, ramp, *id, out); !st.ok()) return st;
  const InjectorInfo* info = FindInjector(*kind);
  for (size_t i = first; i < out->size(); ++i) {
    (*out)[i].on_switch = n["switch"].IsDefined();
    if (info != nullptr) (*out)[i].scope = ScopeName(info->scope);
  }
  return Status::Ok();
}

namespace {
// "a, b or c": the kinds of the registry whose row acts on a switch as
// `pred` says, in alphabetical order.
template <typename Pred>
std::string SwitchKinds(Pred pred) {
  std::set<std::string> names;
  for (const InjectorInfo& i : Injectors()) {
    if (pred(i.on_switch)) names.insert(i.name);
  }
  std::string out;
  size_t i = 0;
  for (const auto& name : names) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += name;
    ++i;
  }
  return out;
}
}  // namespace

Status FaultLoader::CheckSwitchFault(const YAML::Node& n, const std::string& kind,
                                     const Json& params) const {
  const YAML::Node at = n["switch"];
  const std::string name = at.as<std::string>();
  if (!s_.Emulated()) {
    return y_.Error(at,
                    "switch faults need the emulated fabric, where every switch runs an agent "
                    "(fabric: {emulated: ...}); a real fabric's switches run no fdrill-agent");
  }
  if (!s_.topology) {
    return y_.Error(at, "a fault on switch " + name +
                            " needs the fabric's map to know its ports: add `topology: emulated`");
  }
  const std::vector<TopologyPort>* ports = s_.topology->SwitchPorts(name);
  if (ports == nullptr) {
    std::set<std::string> names;
    for (const auto& l : s_.topology->leaves) names.insert(l.name);
    for (const auto& sp : s_.topology->spines) names.insert(sp.name);
    std::string all;
    for (const auto& x : names) all += (all.empty() ? "" : ", ") + x;
    const std::string hint = DidYouMean(name, names);
    return y_.Error(at, "no switch " + name + " in this fabric (switches: " + all + ")" +
                            (hint.empty() ? "" : "; " + hint));
  }
  // What a switch's agent can do (OnSwitch, injectors/injector.h): act on
  // one of its ports, or on the whole switch.
  const InjectorInfo* info = FindInjector(kind);
  const OnSwitch on = info != nullptr ? info->on_switch : OnSwitch::kNo;
  if (on == OnSwitch::kNo) {
    const std::string port_kinds =
        SwitchKinds([](OnSwitch o) { return o == OnSwitch::kPort || o == OnSwitch::kPortOnly; });
    const std::string whole_kinds = SwitchKinds([](OnSwitch o) { return o == OnSwitch::kWhole; });
    return y_.Error(n["kind"], "kind " + kind + " does not act on a switch port; on a switch use " +
                                   port_kinds + " (params.interface: the port), or " + whole_kinds +
                                   " (the whole switch)");
  }
  if (on == OnSwitch::kWhole) return Status::Ok();
  std::string port_names;
  for (const auto& p : *ports) port_names += (port_names.empty() ? "" : ", ") + p.name;
  if (!params.contains("interface") || !params["interface"].is_string()) {
    return y_.Error(n["params"] ? n["params"] : n,
                    "a fault on switch " + name + " needs params.interface: one of its ports (" +
                        port_names + ")");
  }
  const std::string port = params["interface"].get<std::string>();
  for (const auto& p : *ports) {
    if (p.name == port) return Status::Ok();
  }
  return y_.Error(n["params"],
                  "switch " + name + " has no port " + port + " (ports: " + port_names + ")");
}

Result<Target> FaultLoader::Select(const YAML::Node& n) const {
  if (n["node"] && n["target"])
    return y_.Error(n["target"], "a fault takes node: or target:, not both");
  Target target;
  if (n["switch"]) {
    if (n["node"] || n["target"])
      return y_.Error(n["switch"], "a fault takes switch:, node: or target:, only one");
    auto name = y_.Str(n["switch"], "switch");
    if (!name.ok()) return name.status();
    target.nodes = {*name};
  } else if (n["target"]) {
    auto name = y_.Str(n["target"], "target");
    if (!name.ok()) return name.status();
    auto it = targets_.find(*name);
    if (it == targets_.end()) {
      std::set<std::string> known;
      for (const auto& [k, v] : targets_) known.insert(k);
      std::string hint = DidYouMean(*name, known);
      return y_.Error(n["target"], "target \"" + *name + "\" is not defined in targets:" +
                                       (hint.empty() ? "" : "; " + hint));
    }
    target = it->second;
  } else if (n["node"]) {
    auto exprs = y_.StrList(n["node"], "node");
    if (!exprs.ok()) return exprs.status();
    auto nodes = SelectNodes(*exprs, s_.NodeNames());
    if (!nodes.ok()) return y_.Error(n["node"], nodes.status().message());
    target.nodes = *nodes;
  } else {
    return y_.Error(n, "fault needs a node (" + s_.NodeNames().front() + ".." +
                           s_.NodeNames().back() + ", a hostlist like n[1-2]) or a target");
  }
  return target;
}

Result<Json> FaultLoader::Params(const YAML::Node& n, const Target& target) const {
  Json params = target.params;
  if (n["params"]) {
    if (!n["params"].IsMap()) return y_.Error(n["params"], "params must be a mapping");
    const Json own = y_.ToJson(n["params"]);
    for (const auto& [k, v] : own.items()) {
      if (params.contains(k)) {
        return y_.Error(n["params"],
                        "param " + k + " is set by both the target and the fault; keep one");
      }
      params[k] = v;
    }
  }
  return params;
}

Result<Duration> FaultLoader::At(const YAML::Node& n) const {
  if (!n["at"]) return Duration{};
  if (n["at"].IsMap()) {
    // at: {between: [2s, 6s], seed: 3}: a seeded random time in [2s, 6s),
    // fixed when the scenario loads (fdrill plan shows it).
    const YAML::Node r = n["at"];
    if (auto st = y_.CheckKeys(r, "at", {"between", "seed"}); !st.ok()) return st;
    if (!r["between"] || !r["between"].IsSequence() || r["between"].size() != 2 || !r["seed"]) {
      return y_.Error(
          r, "at: {between: [FROM, TO], seed: N} picks a time in [FROM, TO) with the seed");
    }
    const auto lo = y_.Offset(r["between"][0]);
    const auto hi = y_.Offset(r["between"][1]);
    if (!lo || !hi || *hi <= *lo) {
      return y_.Error(r["between"],
                      "at.between must be two durations, the first smaller, like [0s, 5s]");
    }
    auto seed = y_.Int(r["seed"], "at.seed", 0, INT64_MAX);
    if (!seed.ok()) return seed.status();
    return PickTime(*lo, *hi, static_cast<uint64_t>(*seed));
  }
  const auto d = y_.Offset(n["at"]);
  if (!d)
    return y_.Error(n["at"],
                    "at must be a duration like 2s (from the phase's start), at most 168h");
  return *d;
}

Result<FaultLoader::Window> FaultLoader::LoadWindow(const YAML::Node& n,
                                                    const PhaseSpec& phase) const {
  Window w;
  auto at = At(n);
  if (!at.ok()) return at.status();
  w.at = *at;
  if (n["for"]) {
    auto d = y_.Dur(n["for"], "for");
    if (!d.ok()) return d.status();
    w.length = *d;
  } else if (phase.gate) {
    return y_.Error(n, "a fault in phase " + phase.name +
                           " (which waits until stable) needs for: its length, "
                           "because the phase's end is not known in advance");
  }
  w.room = phase.duration;  // a gated phase's minimum
  if (w.at >= w.room || (n["for"] && w.at + w.length > w.room)) {
    return y_.Error(n["at"] ? n["at"] : n["for"],
                    "impossible timeline: the fault's window " + FormatDuration(w.at) + " + " +
                        (n["for"] ? FormatDuration(w.length) : std::string("to the end")) +
                        " does not fit in phase " + phase.name + " (" + FormatDuration(w.room) +
                        (phase.gate ? " minimum" : "") + ")");
  }
  w.span = n["for"] ? w.length : w.room - w.at;
  return w;
}

Status FaultLoader::LoadRamp(const YAML::Node& n, const Json& params, const Window& w,
                             Ramp* ramp) const {
  if (!n["ramp"]) return Status::Ok();
  const YAML::Node r = n["ramp"];
  if (!r.IsMap() || r.size() != 1) {
    return y_.Error(
        r,
        "ramp must name one param and its values, like ramp: {rate: [400mbit, 100mbit, 25mbit]}");
  }
  ramp->key = r.begin()->first.as<std::string>();
  const YAML::Node vals = r.begin()->second;
  if (!vals.IsSequence() || vals.size() < 2) {
    return y_.Error(vals, "ramp " + ramp->key + " needs a list of at least 2 values");
  }
  if (params.contains(ramp->key)) {
    return y_.Error(r, "ramp param " + ramp->key + " is also set in params; keep one");
  }
  for (const auto& v : vals) ramp->values.push_back(y_.ToJson(v));
  if (w.span / static_cast<int64_t>(ramp->values.size()) < std::chrono::milliseconds(500)) {
    return y_.Error(r, "impossible timeline: " + std::to_string(ramp->values.size()) +
                           " ramp steps in " + FormatDuration(w.span) +
                           " leave less than 500ms each");
  }
  return Status::Ok();
}

Result<std::string> FaultLoader::BaseId(const YAML::Node& n, const std::string& kind, size_t index,
                                        const PhaseCopy& copy) const {
  std::string base =
      copy.id_base_prefix + copy.written + "-" + kind + (index ? std::to_string(index) : "");
  if (n["id"]) {
    auto id = y_.Str(n["id"], "fault id");
    if (!id.ok()) return id.status();
    if (id->empty() || id->find_first_of("@#") != std::string::npos) {
      return y_.Error(n["id"],
                      "fault id must be non-empty and without @ or # (fdrill appends those for "
                      "repeats, nodes and ramp steps)");
    }
    base = *id;
  }
  return base + copy.id_suffix;
}

Status FaultLoader::Expand(const YAML::Node& n, const std::string& kind, const Target& target,
                           const Json& params, const Window& w, const Ramp& ramp,
                           const std::string& id, std::vector<FaultSpec>* out) const {
  const size_t steps = ramp.values.empty() ? 1 : ramp.values.size();
  for (const auto& node : target.nodes) {
    for (size_t k = 0; k < steps; ++k) {
      FaultSpec f;
      f.kind = kind;
      f.node = node;
      f.line = n.Mark().line + 1;
      f.column = n.Mark().column + 1;
      f.params = params;
      f.id = id + (target.nodes.size() > 1 || n["target"] ? "@" + node : "");
      f.at = w.at;
      f.length = n["for"] ? w.length : Duration{};
      if (!ramp.values.empty()) {
        f.params[ramp.key] = ramp.values[k];
        const Duration step = w.span / static_cast<int64_t>(steps);
        f.at = w.at + step * static_cast<int64_t>(k);
        f.length = k + 1 == steps ? w.span - step * static_cast<int64_t>(k) : step;
        const Json& v = ramp.values[k];
        f.id += "@" + (v.is_string() ? v.get<std::string>() : DumpJson(v));
      }
      if (auto st = Check(n, w, &f); !st.ok()) return st;
      out->push_back(std::move(f));
    }
  }
  return Status::Ok();
}

Status FaultLoader::Check(const YAML::Node& n, const Window& w, FaultSpec* f) const {
  const Duration on = f->length.count() ? f->length : w.room - f->at;
  f->max_duration = on + s_.lease_ttl;
  if (n["max_duration"]) {
    auto d = y_.Dur(n["max_duration"], "max_duration");
    if (!d.ok()) return d.status();
    if (*d < on) {
      return y_.Error(n["max_duration"], "fault max_duration " + FormatDuration(*d) +
                                             " is shorter than its window (" + FormatDuration(on) +
                                             "); the agent would revert it early");
    }
    f->max_duration = *d;
  }
  // The injector's own parser validates params; nothing is touched.
  auto made = MakeFault(f->kind, f->params, Host{});
  if (!made.ok()) {
    return y_.Error(ParamPlace(n, made.status().message()),
                    "fault " + f->id + ": " + made.status().message());
  }
  return CheckReach(n, *f);
}

// What the file alone shows can never be a target: the agent would refuse
// it at the drill's `check` (agents/mgmt_guard.h), but `fdrill validate`
// says it first, naming the line.
Status FaultLoader::CheckReach(const YAML::Node& n, const FaultSpec& f) const {
  const YAML::Node params = n["params"];
  auto at = [&](const char* key) { return params.IsMap() && params[key] ? params[key] : n; };
  if (!f.on_switch && f.params.is_object()) {
    const std::string ifname = f.params.value("interface", Json("")).is_string()
                                   ? f.params.value("interface", std::string())
                                   : std::string();
    if (ifname == "lo" || (s_.Emulated() && ifname == kEmulatedMgmtInterface)) {
      return y_.Error(at("interface"),
                      "fault " + f.id + ": params.interface " + ifname +
                          (ifname == "lo" ? " is the loopback"
                                          : " is the emulated node's management interface") +
                          ", which no agent ever faults (it carries the path to the controller); "
                          "the fabric's interfaces are fab0, fab1, ...");
    }
  }
  // An address or prefix that holds the emulated fabric's management
  // network (the controller and every agent): a partition from 0.0.0.0/0
  // cuts them all off.
  if (s_.Emulated()) {
    const auto mgmt = ParseIpv4Prefix(kEmulatedMgmtNet);
    for (const char* key : {"peers", "peer"}) {
      const Json* v = f.params.is_object() && f.params.contains(key) ? &f.params[key] : nullptr;
      if (v == nullptr) continue;
      std::vector<std::string> texts;
      if (v->is_string()) texts.push_back(v->get<std::string>());
      if (v->is_array()) {
        for (const Json& item : *v)
          if (item.is_string()) texts.push_back(item.get<std::string>());
      }
      for (const std::string& t : texts) {
        auto prefix = ParseIpv4Prefix(t);
        if (prefix && mgmt && prefix->Overlaps(*mgmt)) {
          return y_.Error(at(key), "fault " + f.id + ": params." + key + " " + t +
                                       " holds addresses of the emulated fabric's management "
                                       "network " +
                                       kEmulatedMgmtNet +
                                       " (the controller and every agent): the fault would cut "
                                       "them off; name the fabric's addresses (198.18.0.0/16) "
                                       "instead");
        }
      }
    }
  }
  // A rank the job does not have.
  if (f.params.is_object() && f.params.contains("rank") && f.params["rank"].is_number_integer()) {
    const int64_t rank = f.params["rank"].get<int64_t>();
    for (const WorkloadSpec& w : s_.Workloads()) {
      if (std::find(w.nodes.begin(), w.nodes.end(), f.node) == w.nodes.end()) continue;
      const int64_t ranks = static_cast<int64_t>(w.nodes.size()) * w.ranks_per_node;
      if (rank >= ranks) {
        return y_.Error(at("rank"), "fault " + f.id + ": params.rank " + std::to_string(rank) +
                                        " is beyond the job: it has " + std::to_string(ranks) +
                                        " rank(s), 0.." + std::to_string(ranks - 1));
      }
    }
  }
  return Status::Ok();
}

YAML::Node FaultLoader::ParamPlace(const YAML::Node& n, const std::string& error) {
  // ParamReader's errors open with the key: "params.rate: ...".
  const std::string prefix = "params.";
  const size_t colon = error.find(':');
  if (error.rfind(prefix, 0) == 0 && colon != std::string::npos) {
    const std::string key = error.substr(prefix.size(), colon - prefix.size());
    if (n["params"].IsMap() && n["params"][key]) return n["params"][key];
  }
  return n["ramp"] ? n["ramp"] : n["params"] ? n["params"] : n["target"] ? n["target"] : n["kind"];
}

}  // namespace fdrill
