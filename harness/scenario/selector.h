// Node selection for a fault's target: a hostlist (or list of them) checked
// against the inventory, then optionally a seeded random subset. Pure and
// deterministic: the same scenario picks the same nodes on every machine and
// every run (its own Fisher-Yates over splitmix64, not std::shuffle, whose
// output the standard leaves to each library), so `fdrill plan` shows
// exactly what `fdrill run` will touch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/core/result.h"
#include "common/core/units.h"

namespace fdrill {

struct RandomPick {
  std::optional<int> count;       // exactly one of count and percent
  std::optional<double> percent;  // of the selected nodes, rounded up, at least 1
  uint64_t seed = 0;
};

// The nodes EXPRS name, in inventory order; an unknown name is an error that
// lists what exists. "all" names every node (unless a node is called "all").
Result<std::vector<std::string>> SelectNodes(const std::vector<std::string>& exprs,
                                             const std::vector<std::string>& inventory);

// A time in [lo, hi), whole milliseconds, from the seed (same generator).
Duration PickTime(Duration lo, Duration hi, uint64_t seed);

// A random subset of NODES as PICK says, in inventory (input) order.
Result<std::vector<std::string>> PickRandom(const std::vector<std::string>& nodes,
                                            const RandomPick& pick);

}  // namespace fdrill
