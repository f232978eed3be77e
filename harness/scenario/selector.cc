#include "harness/scenario/selector.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/scenario/hostlist.h"

namespace fdrill {

namespace {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string Describe(const std::vector<std::string>& inventory) {
  if (inventory.size() <= 8) {
    std::string out;
    for (const auto& n : inventory) out += (out.empty() ? "" : ", ") + n;
    return out;
  }
  return inventory.front() + ", " + inventory[1] + ", ... " + inventory.back() + " (" +
         std::to_string(inventory.size()) + " nodes)";
}

}  // namespace

Result<std::vector<std::string>> SelectNodes(const std::vector<std::string>& exprs,
                                             const std::vector<std::string>& inventory) {
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < inventory.size(); ++i) position[inventory[i]] = i;
  std::vector<size_t> chosen;
  for (const auto& expr : exprs) {
    // "all": every node of the fabric (a drill that runs on any allocation).
    auto names = expr == "all" && !position.count("all")
                     ? Result<std::vector<std::string>>(inventory)
                     : ExpandHostlist(expr);
    if (!names.ok()) return names.status();
    for (const auto& n : *names) {
      auto it = position.find(n);
      if (it == position.end()) {
        return NotFound("node \"" + n + "\" does not exist; this drill's fabric has " +
                        Describe(inventory));
      }
      if (std::find(chosen.begin(), chosen.end(), it->second) != chosen.end()) {
        return InvalidArgument("node " + n + " is selected twice");
      }
      chosen.push_back(it->second);
    }
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<std::string> out;
  for (size_t i : chosen) out.push_back(inventory[i]);
  return out;
}

Duration PickTime(Duration lo, Duration hi, uint64_t seed) {
  const auto span_ms = std::chrono::duration_cast<std::chrono::milliseconds>(hi - lo).count();
  if (span_ms <= 0) return lo;
  uint64_t state = seed;
  return lo + std::chrono::milliseconds(
                  static_cast<int64_t>(SplitMix64(&state) % static_cast<uint64_t>(span_ms)));
}

Result<std::vector<std::string>> PickRandom(const std::vector<std::string>& nodes,
                                            const RandomPick& pick) {
  size_t want = 0;
  if (pick.count) {
    if (*pick.count < 1) return InvalidArgument("random count must be at least 1");
    want = static_cast<size_t>(*pick.count);
  } else if (pick.percent) {
    if (*pick.percent <= 0 || *pick.percent > 100)
      return InvalidArgument("random percent must be in (0, 100]");
    want = std::max<size_t>(
        1, static_cast<size_t>(
               std::ceil(*pick.percent * static_cast<double>(nodes.size()) / 100.0 - 1e-9)));
  } else {
    return InvalidArgument("random needs count or percent");
  }
  if (want > nodes.size()) {
    return InvalidArgument("random count " + std::to_string(want) + " is more than the " +
                           std::to_string(nodes.size()) + " node(s) selected");
  }
  std::vector<size_t> idx(nodes.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  uint64_t state = pick.seed;
  for (size_t i = idx.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(SplitMix64(&state) % i);
    std::swap(idx[i - 1], idx[j]);
  }
  idx.resize(want);
  std::sort(idx.begin(), idx.end());
  std::vector<std::string> out;
  for (size_t i : idx) out.push_back(nodes[i]);
  return out;
}

}  // namespace fdrill
