#include "fabric/fabric_topology.h"

#include <fmt/format.h>

#include "common/core/units.h"

namespace fdrill {

namespace {

std::string Port(const std::string& name, const std::string& to, uint64_t rate_bps) {
  std::string out = fmt::format("      {}: {{to: \"{}\"", name, to);
  if (rate_bps > 0) out += ", rate: " + FormatRate(rate_bps);
  return out + "}\n";
}

}  // namespace

std::string TopologyPath(const std::string& state_dir) { return state_dir + "/topology.yaml"; }

std::string TopologyYaml(const FabricShape& shape) {
  const int per_leaf = shape.NodesPerLeaf();
  const bool spine = shape.leaves > 1;
  std::string out = fmt::format(
      "# The emulated fabric's map ({}), as `fdrill fabric up` builds it.\n"
      "# Drills read it with `topology: emulated`.\n",
      shape.Describe());
  out += "rails:\n";
  for (int r = 0; r < shape.rails; ++r)
    out += fmt::format("  {}: {{interfaces: [fab{}]}}\n", RailName(r), r);
  out += "leaves:\n";
  for (int r = 0; r < shape.rails; ++r) {
    for (int l = 0; l < shape.leaves; ++l) {
      std::string nodes, ports;
      for (int i = l * per_leaf; i < (l + 1) * per_leaf; ++i) {
        nodes += (nodes.empty() ? "n" : ", n") + std::to_string(i);
        ports +=
            Port("swp" + std::to_string(i), fmt::format("n{}:fab{}", i, r), shape.port_rate_bps);
      }
      if (spine) {
        ports += Port("up0", SpineName(r) + ":dn" + std::to_string(l), shape.UplinkRateBps());
      }
      out += fmt::format("  {}:\n    nodes: [{}]\n    rails: [{}]\n    ports:\n{}",
                         LeafName(shape, r, l), nodes, RailName(r), ports);
    }
  }
  if (spine) {
    out += "spines:\n";
    for (int r = 0; r < shape.rails; ++r) {
      std::string ports;
      for (int l = 0; l < shape.leaves; ++l)
        ports +=
            Port("dn" + std::to_string(l), LeafName(shape, r, l) + ":up0", shape.UplinkRateBps());
      out +=
          fmt::format("  {}:\n    rails: [{}]\n    ports:\n{}", SpineName(r), RailName(r), ports);
    }
  }
  return out;
}

}  // namespace fdrill
