// phases: the drill's timeline. Repeats and groups expand here into the
// flat list the drill walks ("name#k", "group.name#k"); each phase's faults
// load through FaultLoader and are checked together: ids unique in the
// scenario, no two faults holding one thing at once, max_faulted_nodes and
// the blast radius. The first and last phases are fault-free baselines.
#include <set>
#include <string>

#include "harness/scenario/blast_radius.h"
#include "harness/scenario/load_faults.h"
#include "harness/scenario/load_sections.h"

namespace fdrill {

namespace {

// Loads the phases into one scenario; one instance per load.
class PhaseLoader {
 public:
  PhaseLoader(const YamlReader& y, const Targets& targets, Scenario* s)
      : y_(y), s_(s), faults_(y, targets, *s) {}

  Status LoadAll(const YAML::Node& n);

 private:
  // A phase, a repeated phase, or a group of phases repeated together.
  Status LoadEntry(const YAML::Node& p, bool in_group, const std::string& prefix);
  Status LoadPhase(const YAML::Node& p, const PhaseCopy& copy);
  Status CheckOverlaps(const YAML::Node& at, const PhaseSpec& phase) const;
  Status CheckBlastRadius(const PhaseSpec& phase) const;

  const YamlReader& y_;
  Scenario* s_;
  FaultLoader faults_;
  std::set<std::string> names_;  // phase names so far, repeats included
  std::set<std::string> ids_;    // fault ids so far
  Duration total_{};             // the phases loaded so far, at their longest
};

// Two faults of one kind on the same node and interface cannot hold it at
// once (the second would replace the first's qdisc or rule).
Status PhaseLoader::CheckOverlaps(const YAML::Node& at, const PhaseSpec& phase) const {
  auto end = [&](const FaultSpec& f) {
    return f.length.count() ? f.at + f.length : phase.duration;
  };
  for (size_t i = 0; i < phase.faults.size(); ++i) {
    for (size_t j = i + 1; j < phase.faults.size(); ++j) {
      const FaultSpec& a = phase.faults[i];
      const FaultSpec& b = phase.faults[j];
      if (a.node != b.node || a.kind != b.kind ||
          a.params.value("interface", "") != b.params.value("interface", ""))
        continue;
      if (a.at < end(b) && b.at < end(a)) {
        return y_.Error(
            at, "impossible timeline: faults " + a.id + " and " + b.id + " both hold " + a.kind +
                    " on " + a.node +
                    (a.params.contains("interface") ? " " + a.params.value("interface", "") : "") +
                    " at once in phase " + phase.name);
      }
    }
  }
  return Status::Ok();
}

Status PhaseLoader::LoadPhase(const YAML::Node& p, const PhaseCopy& copy) {
  PhaseSpec phase;
  phase.name = copy.name;
  if (!names_.insert(phase.name).second)
    return y_.Error(p["name"], "phase name \"" + phase.name + "\" is used twice");
  if (p["until"]) {
    auto until = y_.Str(p["until"], "until");
    if (!until.ok()) return until.status();
    if (*until != "stable")
      return y_.Error(p["until"], "until must be stable (the job back in the baseline band)");
    if (!p["timeout"])
      return y_.Error(p, "phase " + phase.name +
                             " waits until stable and needs timeout: the longest it may wait");
    GateSpec gate;
    auto t = y_.Dur(p["timeout"], "timeout");
    if (!t.ok()) return t.status();
    gate.timeout = *t;
    if (p["on_timeout"]) {
      auto o = y_.Str(p["on_timeout"], "on_timeout");
      if (!o.ok()) return o.status();
      if (*o != "abort" && *o != "continue")
        return y_.Error(p["on_timeout"], "on_timeout must be abort or continue");
      gate.abort_on_timeout = *o == "abort";
    }
    phase.gate = gate;
    phase.duration = std::chrono::seconds(1);
    if (p["duration"]) {
      auto d = y_.Dur(p["duration"], "duration");
      if (!d.ok()) return d.status();
      phase.duration = *d;
    }
    if (phase.duration > gate.timeout) {
      return y_.Error(p["timeout"], "impossible timeline: timeout " + FormatDuration(gate.timeout) +
                                        " is shorter than the phase's minimum duration " +
                                        FormatDuration(phase.duration));
    }
  } else {
    for (const char* key : {"timeout", "on_timeout"}) {
      if (p[key])
        return y_.Error(p[key], std::string(key) + " belongs to a phase with until: stable");
    }
    if (!p["duration"])
      return y_.Error(p, "phase " + phase.name + " needs a duration (like 15s) or until: stable");
    auto d = y_.Dur(p["duration"], "duration");
    if (!d.ok()) return d.status();
    phase.duration = *d;
  }
  if (p["faults"]) {
    if (!p["faults"].IsSequence()) return y_.Error(p["faults"], "faults must be a list");
    std::set<std::string> nodes;
    for (size_t i = 0; i < p["faults"].size(); ++i) {
      std::vector<FaultSpec> made;
      if (auto st = faults_.Load(p["faults"][i], phase, i, copy, &made); !st.ok()) return st;
      for (auto& f : made) {
        if (!ids_.insert(f.id).second)
          return y_.Error(p["faults"][i], "fault id \"" + f.id + "\" is used twice");
        nodes.insert(f.node);
        phase.faults.push_back(std::move(f));
      }
    }
    if (auto st = CheckOverlaps(p["faults"], phase); !st.ok()) return st;
    if (auto st = CheckBlastRadius(phase); !st.ok()) return st;
  }
  total_ += phase.MaxDuration();
  if (total_ > YamlReader::kMaxDrill) {
    return y_.Error(p, "the drill would last more than 30 days (repeats included); split it");
  }
  // Checked as they are made: a group repeated 10000 times must not build
  // millions of phases first.
  if (s_->phases.size() >= 20000)
    return y_.Error(p, "the repeats expand to more than 20000 phases");
  s_->phases.push_back(std::move(phase));
  return Status::Ok();
}

Status PhaseLoader::LoadEntry(const YAML::Node& p, bool in_group, const std::string& prefix) {
  const bool group = p.IsMap() && p["phases"];
  if (group) {
    if (auto st = y_.CheckKeys(p, "phase group", {"name", "repeat", "phases"}); !st.ok()) return st;
    if (in_group) return y_.Error(p["phases"], "a group's phases cannot hold another group");
  } else if (auto st = y_.CheckKeys(
                 p, "phase",
                 {"name", "duration", "faults", "repeat", "until", "timeout", "on_timeout"});
             !st.ok()) {
    return st;
  }
  if (!p["name"]) return y_.Error(p, group ? "phase group needs a name" : "phase needs a name");
  auto name = y_.Str(p["name"], "phase name");
  if (!name.ok()) return name.status();
  if (name->empty() || name->find_first_of("#.@") != std::string::npos) {
    return y_.Error(p["name"],
                    "phase name must be non-empty and without #, . or @ (fdrill uses those for "
                    "repeats and groups)");
  }
  int repeat = 1;
  if (p["repeat"]) {
    auto r = y_.Int(p["repeat"], "repeat", 1, 10000);
    if (!r.ok()) return r.status();
    repeat = static_cast<int>(*r);
  }
  for (int k = 1; k <= repeat; ++k) {
    const std::string suffix = repeat > 1 ? "#" + std::to_string(k) : "";
    if (group) {
      if (!p["phases"].IsSequence() || p["phases"].size() == 0)
        return y_.Error(p["phases"], "a group's phases must be a non-empty list");
      for (const auto& child : p["phases"]) {
        if (auto st = LoadEntry(child, true, *name + suffix + "."); !st.ok()) return st;
      }
    } else {
      PhaseCopy copy{prefix + *name + suffix, *name, "", suffix};
      if (!prefix.empty()) {
        // Inside group "cycle#2.": ids read "cycle.flap-link_flap#2".
        const std::string group_name = prefix.substr(0, prefix.find_first_of("#."));
        const size_t hash = prefix.find('#');
        copy.id_base_prefix = group_name + ".";
        copy.id_suffix = hash == std::string::npos
                             ? suffix
                             : prefix.substr(hash, prefix.size() - hash - 1) + suffix;
      }
      if (auto st = LoadPhase(p, copy); !st.ok()) return st;
    }
  }
  return Status::Ok();
}

Status PhaseLoader::LoadAll(const YAML::Node& n) {
  if (!n.IsSequence() || n.size() == 0) return y_.Error(n, "phases must be a non-empty list");
  for (const auto& p : n) {
    if (auto st = LoadEntry(p, false, ""); !st.ok()) return st;
  }
  if (!s_->phases.front().faults.empty()) {
    return y_.Error(
        n[0], "the first phase must be fault-free: it is the baseline the report measures against");
  }
  if (s_->phases.front().gate) {
    return y_.Error(
        n[0], "the first phase cannot wait until stable: it is the baseline that defines stable");
  }
  if (!s_->phases.back().faults.empty()) {
    return y_.Error(n[n.size() - 1],
                    "the last phase must be fault-free, so recovery can be measured");
  }
  return Status::Ok();
}

// Every set of PHASE's faults in force at once within safety.blast_radius;
// the error names the fault whose apply crosses a limit, at its place.
Status PhaseLoader::CheckBlastRadius(const PhaseSpec& phase) const {
  // One notion of how many nodes a drill may reach: the nodes the faults in
  // force at once take down, a switch's every node behind it (Footprint).
  // safety.max_faulted_nodes (default 1) is blast_radius.max_nodes when
  // that is not given (given both, LoadSafety keeps the stricter in both).
  BlastRadiusSpec limits = s_->blast_radius;
  if (!limits.max_nodes) limits.max_nodes = s_->max_faulted_nodes;
  // Called for a message only: the phase's earliest start, every earlier
  // gate stable at its minimum.
  auto when = [&](Duration offset) {
    Duration start{};
    bool gated = false;
    for (const auto& p : s_->phases) {
      start += p.duration;
      gated = gated || p.gate.has_value();
    }
    return "t" + std::string(gated ? ">=" : "=") + FormatDuration(start + offset) + " (phase " +
           phase.name + " +" + FormatDuration(offset) + ")";
  };
  const Topology* topology = s_->topology ? &*s_->topology : nullptr;
  const auto walk = WalkBlastRadius(phase, limits, topology, when);
  if (!walk.violation) return Status::Ok();
  const FaultSpec& f = phase.faults[walk.violation->culprit];
  std::string message = walk.violation->message;
  const std::string key = "blast_radius.max_nodes " + std::to_string(*limits.max_nodes);
  if (!s_->blast_radius.max_nodes && message.rfind(key, 0) == 0) {
    message = "safety.max_faulted_nodes " + std::to_string(*limits.max_nodes) +
              (s_->max_faulted_nodes == 1 ? " (the default)" : "") + message.substr(key.size()) +
              "; a switch counts every node behind it: raise safety.max_faulted_nodes to let "
              "this drill reach them";
  }
  return InvalidArgument(y_.file() + ":" + std::to_string(f.line) + ":" + std::to_string(f.column) +
                         ": " + message);
}

}  // namespace

Status LoadPhases(const YamlReader& y, const YAML::Node& n, const Targets& targets, Scenario* s) {
  return PhaseLoader(y, targets, s).LoadAll(n);
}

}  // namespace fdrill
