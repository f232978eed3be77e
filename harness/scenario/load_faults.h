// FaultLoader: one entry of a phase's faults: list, as written, into the
// FaultSpecs the drill runs (internal to harness/scenario). An entry selects
// nodes (node: or a target:) or one switch of the emulated fabric (switch:,
// its port as params.interface), takes a window in its phase (at:, for:) and
// may ramp one param; it becomes one FaultSpec per node and ramp step, each
// with its id, its max_duration, and its params checked by the injector's own
// parser (nothing is touched). Const: one loader serves every phase.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/core/result.h"
#include "harness/scenario/load_sections.h"
#include "harness/scenario/scenario.h"
#include "harness/scenario/yaml_reader.h"

namespace fdrill {

// Where a phase entry lands after repeats: its name, and what to append
// to the ids of the faults it holds.
struct PhaseCopy {
  std::string name;
  std::string written;         // the name as written, for default fault ids
  std::string id_base_prefix;  // "cycle." inside a group
  std::string id_suffix;       // "#2" for the second copy
};

class FaultLoader {
 public:
  // `s` needs its fabric and safety loaded; all three must outlive the loader.
  FaultLoader(const YamlReader& y, const Targets& targets, const Scenario& s)
      : y_(y), targets_(targets), s_(s) {}

  // Entry N (`index`, for its default id) of PHASE, appended to OUT.
  Status Load(const YAML::Node& n, const PhaseSpec& phase, size_t index, const PhaseCopy& copy,
              std::vector<FaultSpec>* out) const;

 private:
  // When the fault holds, inside its phase.
  struct Window {
    Duration at{};      // from the phase's start
    Duration length{};  // for:, or zero: to the phase's end
    Duration room{};    // the phase's duration (a gated phase's minimum)
    Duration span{};    // how long it holds: length, or room - at
  };
  // ramp: {param: [v1, v2, ...]}: the window split into equal steps.
  struct Ramp {
    std::string key;
    std::vector<Json> values;
  };

  Result<Target> Select(const YAML::Node& n) const;
  // After the params parsed: an interface no agent faults (lo; the emulated
  // node's mgmt0), an address or prefix holding the emulated fabric's
  // management network, a rank beyond the node's job.
  Status CheckReach(const YAML::Node& n, const FaultSpec& f) const;
  // switch: NAME: a leaf or spine of the emulated fabric's map, a kind whose
  // registry row acts on a switch (OnSwitch), and params.interface one of its
  // ports unless the kind takes the whole switch.
  Status CheckSwitchFault(const YAML::Node& n, const std::string& kind, const Json& params) const;
  // The target's selector params plus the fault's own params:.
  Result<Json> Params(const YAML::Node& n, const Target& target) const;
  Result<Duration> At(const YAML::Node& n) const;
  Result<Window> LoadWindow(const YAML::Node& n, const PhaseSpec& phase) const;
  Status LoadRamp(const YAML::Node& n, const Json& params, const Window& w, Ramp* ramp) const;
  // The id before "@node", "@step" and the repeat's suffix.
  Result<std::string> BaseId(const YAML::Node& n, const std::string& kind, size_t index,
                             const PhaseCopy& copy) const;
  // One fault per node and ramp step, each checked by Check.
  Status Expand(const YAML::Node& n, const std::string& kind, const Target& target,
                const Json& params, const Window& w, const Ramp& ramp, const std::string& id,
                std::vector<FaultSpec>* out) const;
  // max_duration (default: its window plus the lease TTL) and the
  // injector's parser.
  Status Check(const YAML::Node& n, const Window& w, FaultSpec* f) const;
  // Where the injector's ERROR points in entry N: the value of the param it
  // names when N's params: gives it, else the ramp, params, target or kind.
  static YAML::Node ParamPlace(const YAML::Node& n, const std::string& error);

  const YamlReader& y_;
  const Targets& targets_;
  const Scenario& s_;
};

}  // namespace fdrill
