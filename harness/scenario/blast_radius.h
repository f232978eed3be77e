// The blast radius of a drill in fabric terms: how many nodes, rails (per
// node and in all), leaf switches and NVLink domains the faults in force AT
// THE SAME TIME reach. Pure: a function of the loaded phases and topology.
//
// When faults are in force together: the engine (harness/controller/
// engine.cc) applies a fault `at` after its phase starts and reverts it
// `length` later or at the phase's end, and reverts every fault when its
// phase ends. So faults of different phases are never in force together,
// and within a phase windows are half-open [at, end): at one instant the
// engine reverts (and waits for the revert) before it applies. A phase that
// waits until stable has an uncertain end; its faults must have for: and
// fit in its minimum, so their windows are fixed from the phase's start. A
// fault reverted "at the phase's end" counts until the latest end (a gate's
// timeout), so an uncertain window is treated as overlapping everything
// that may overlap it. Repeats and ramp steps are phases and faults of
// their own; random picks are fixed when the scenario loads.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/core/units.h"
#include "harness/scenario/topology.h"

namespace fdrill {

struct FaultSpec;
struct PhaseSpec;

// safety.blast_radius; unset limits are not checked. All but max_nodes
// need a topology file.
struct BlastRadiusSpec {
  std::optional<int> max_nodes;
  std::optional<int> max_rails_per_node;
  std::optional<int> max_rails;
  std::optional<int> max_leaves;
  std::optional<int> max_nvlink_domains;
  bool Any() const {
    return max_nodes || max_rails_per_node || max_rails || max_leaves || max_nvlink_domains;
  }
};

// What one fault touches. Rails are named as the topology names them; an
// interface or HCA on no rail counts as its own rail, named after it.
struct Footprint {
  // The nodes it reaches: its own node; for a switch port the nodes behind
  // it (a node port: that node; a leaf's uplink, or the spine port facing a
  // leaf: every node of that leaf).
  std::set<std::string> nodes;
  std::set<std::string> rails;
  std::set<std::string> leaves;       // the node's leaf on each rail touched
  std::optional<std::string> nvlink;  // the node's NVLink domain; a node in none is its own
};
// By the scope of the fault's kind in injectors/registry.cc (Scope,
// injectors/injector.h): interface -> params.interface's rail (none given,
// as link_partition allows: every rail of the node); ib_port -> params.
// device's rail; gpu -> the node's NVLink domain; nccl -> the rails its
// ib_hca takes away, and the NVLink domain with p2p_disable or nvls_enable
// false; rank and node -> the node alone; a switch port (FaultSpec::
// on_switch) -> the switch's rail, the leaf it is or faces, and the nodes
// behind the port (every port, for a kind that takes the whole switch:
// OnSwitch::kWhole). A kind whose row says Radius::kFarHca reaches the far
// end of a link instead (its params.hca's node). Without a topology every
// interface and HCA is its own rail and every node its own NVLink domain.
Footprint FootprintOf(const FaultSpec& f, const Topology* topology);

// The largest reach of faults in force together, each measure on its own.
struct BlastRadius {
  int nodes = 0;
  int rails_per_node = 0;
  int rails = 0;
  int leaves = 0;
  int nvlink_domains = 0;
};

// One limit crossed: MESSAGE reads "blast_radius.max_rails 1: at +10s faults
// a and b are in force on rails rail0 and rail1 (2 rails)"; CULPRIT is the
// index (in the phase) of the fault whose apply crossed it.
struct BlastViolation {
  std::string message;
  size_t culprit = 0;
};

// Walks PHASE's windows. WHEN names the instants in messages: given the
// offset into the phase, it returns text like "t=40s".
struct PhaseBlast {
  BlastRadius largest;
  std::optional<BlastViolation> violation;  // the first limit crossed, in time order
};
PhaseBlast WalkBlastRadius(const PhaseSpec& phase, const BlastRadiusSpec& limits,
                           const Topology* topology,
                           const std::function<std::string(Duration)>& when);

// Each measure's largest over PHASES.
BlastRadius LargestBlastRadius(const std::vector<PhaseSpec>& phases, const Topology* topology);

// One line for `fdrill plan`: "largest at once: 2 nodes, 1 rail per node, 2
// rails, 1 leaf, 1 NVLink domain (topology FILE); limits: max_rails_per_node 1".
std::string BlastRadiusSummary(const std::vector<PhaseSpec>& phases, const Topology* topology,
                               const BlastRadiusSpec& limits);

}  // namespace fdrill
