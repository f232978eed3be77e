#include "fabric/fabric_shape.h"

#include "common/core/units.h"

namespace fdrill {

uint64_t FabricShape::UplinkRateBps() const {
  if (port_rate_bps == 0 || oversubscription <= 0 || leaves <= 0) return 0;
  return static_cast<uint64_t>(static_cast<double>(port_rate_bps) * NodesPerLeaf() /
                               oversubscription);
}

namespace {

std::string Ratio(double k) {
  std::string s = std::to_string(k);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

std::string FabricShape::Describe() const {
  std::string out = std::to_string(nodes) + " nodes x " + std::to_string(rails) + " rail" +
                    (rails == 1 ? "" : "s") + " x " + std::to_string(leaves) + " lea" +
                    (leaves == 1 ? "f" : "ves");
  if (port_rate_bps == 0) return out + ", unshaped";
  out += ", ports " + FormatRate(port_rate_bps);
  if (leaves > 1)
    out += ", uplinks " + FormatRate(UplinkRateBps()) + " (" + Ratio(oversubscription) + ":1)";
  return out;
}

std::string FabricShape::UpFlags() const {
  std::string out = "--nodes " + std::to_string(nodes);
  if (rails != 1) out += " --rails " + std::to_string(rails);
  if (leaves != 1) out += " --leaves " + std::to_string(leaves);
  if (oversubscription != 1) out += " --oversubscription " + Ratio(oversubscription);
  if (port_rate_bps != 0) out += " --port-rate " + FormatRate(port_rate_bps);
  return out;
}

ShapeNames ShapeNames::Flags() {
  return {"--nodes", "--rails", "--leaves", "--oversubscription", "--port-rate"};
}

ShapeNames ShapeNames::Scenario() {
  return {"fabric.emulated.nodes", "fabric.emulated.rails", "fabric.emulated.leaves",
          "fabric.emulated.oversubscription", "fabric.emulated.port_rate"};
}

Status CheckShape(const FabricShape& shape, const ShapeNames& names) {
  auto range = [](const char* name, int v, int lo, int hi) {
    if (v >= lo && v <= hi) return Status::Ok();
    return InvalidArgument(std::string(name) + " must be " + std::to_string(lo) + ".." +
                           std::to_string(hi) + ", got " + std::to_string(v));
  };
  if (Status s = range(names.nodes, shape.nodes, 1, kMaxFabricNodes); !s.ok()) return s;
  if (Status s = range(names.rails, shape.rails, 1, kMaxFabricRails); !s.ok()) return s;
  if (Status s = range(names.leaves, shape.leaves, 1, kMaxFabricLeaves); !s.ok()) return s;
  if (shape.nodes % shape.leaves != 0) {
    return InvalidArgument(std::string(names.leaves) + " " + std::to_string(shape.leaves) +
                           " does not divide " + names.nodes + " " + std::to_string(shape.nodes) +
                           ": every leaf holds the same number of nodes (nodes per leaf = nodes / "
                           "leaves); use a divisor of " +
                           std::to_string(shape.nodes));
  }
  if (!(shape.oversubscription > 0) || shape.oversubscription > 64) {
    return InvalidArgument(std::string(names.oversubscription) +
                           " must be a number in (0, 64] (4 for 4:1), got " +
                           Ratio(shape.oversubscription));
  }
  if (shape.oversubscription != 1 && shape.port_rate_bps == 0) {
    return InvalidArgument(std::string(names.oversubscription) + " needs " + names.port_rate +
                           " (an uplink carries port rate x nodes per leaf / oversubscription), "
                           "e.g. 1gbit");
  }
  if (shape.oversubscription != 1 && shape.leaves == 1) {
    return InvalidArgument(std::string(names.oversubscription) + " needs " + names.leaves +
                           " 2 or more: with one leaf per rail there is no uplink");
  }
  return Status::Ok();
}

std::string RailName(int rail) { return "rail" + std::to_string(rail); }

std::string LeafName(const FabricShape& shape, int rail, int leaf) {
  if (shape.Flat()) return "sw";
  return "rail" + std::to_string(rail) + "-leaf" + std::to_string(leaf);
}

std::string SpineName(int rail) { return "rail" + std::to_string(rail) + "-spine"; }

}  // namespace fdrill
