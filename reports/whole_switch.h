// WholeSwitch: when the links a window's evidence names are every cable of
// one switch, the switch is the element they share. A leaf without power
// reads as every node behind it losing carrier at once (scenarios/
// leaf-down.yaml: n0-n3 fab1 and the leaf's own ports); Localise alone
// names one of those links at medium confidence, a cable that is fine.
// Pure; needs the fabric's cabling (inventory.json's switches, run_data.h),
// so it speaks only where that is known: the emulated fabric, and a real
// cluster's drill with a topology file (harness/scenario/
// topology_switches.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/counter_index.h"
#include "reports/localise.h"
#include "reports/run_data.h"

namespace fdrill {

struct SwitchEvidence {
  std::string name;  // "rail1-leaf0"
  // Each of its cables with evidence, as the evidence named it, strongest
  // first: "n2 fab1", "rail1-leaf0 up0".
  std::vector<std::string> cables;
};

// The switch S when, in LINKS (LinkEvidenceIn's order, strongest first):
//  - the links whose evidence is their own counters (not retransmissions
//    alone, which say what a node inferred about its whole path) and at
//    least a third of the strongest's score lie on two or more cables;
//  - every one of those cables ends on S (a cable is a node's link and the
//    switch port it faces — a netdev and the HCA port under it, listed
//    under one port name, are one cable — or two switches' ports), and any other such
//    link is S's own (its bridge: br0 on the emulated fabric);
//  - and every cable of S that was sampled at all (either end has a
//    counter in COUNTERS) is among them: the whole switch, not some ports.
// nullopt otherwise, and when the cables share more than one switch.
std::optional<SwitchEvidence> WholeSwitch(const CounterIndex& counters,
                                          const std::vector<LinkEvidence>& links,
                                          const std::vector<InventorySwitch>& switches);

}  // namespace fdrill
