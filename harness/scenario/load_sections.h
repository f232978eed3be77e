// The scenario's sections, each loaded by its own file (internal to
// harness/scenario; loader.cc calls them in the order a section may depend
// on the ones before it: fabric, topology, targets, workload, safety, phases,
// expect). Each checks every key of its mapping, fills its part of the
// Scenario and returns the first error as "FILE:LINE:COL: what; hint".
// Nothing here touches a machine.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/core/result.h"
#include "harness/scenario/scenario.h"
#include "harness/scenario/yaml_reader.h"

namespace fdrill {

// A named selection from `targets:`, resolved to nodes.
struct Target {
  std::vector<std::string> nodes;
  // Selector keys that are injector params (interface, port, gpu, ...).
  Json params = Json::object();
};
using Targets = std::map<std::string, Target>;

// load_fabric.cc: fabric: (emulated, hosts file or Slurm allocation), the
// topology: file, and targets: (needs the fabric's node names).
Status LoadFabric(const YamlReader& y, const YAML::Node& n, Scenario* s);
Status LoadTopologyKey(const YamlReader& y, const YAML::Node& n, Scenario* s);
Status LoadTargets(const YamlReader& y, const YAML::Node& n, const Scenario& s, Targets* out);

// load_workload.cc: workload: (fdrill-collective's settings, mode: train
// and its restart policy, a real cluster's command and launcher).
Status LoadWorkload(const YamlReader& y, const YAML::Node& n, Scenario* s);
// workloads: (tenants, each on its own nodes; emulated fabric only).
Status LoadTenants(const YamlReader& y, const YAML::Node& n, Scenario* s);

// load_safety.cc: safety: (leases, stop conditions, blast radius). Before
// the phases, whose faults it limits.
Status LoadSafety(const YamlReader& y, const YAML::Node& n, Scenario* s);

// load_phases.cc: phases:, repeats and groups expanded, each fault checked
// by its injector's parser (load_faults.cc).
Status LoadPhases(const YamlReader& y, const YAML::Node& n, const Targets& targets, Scenario* s);

// load_expect.cc: expect: (fault ids it names must exist: after the phases).
Status LoadExpect(const YamlReader& y, const YAML::Node& n, const Scenario& s, ExpectSpec* e);

}  // namespace fdrill
