// CounterIndex: a run's counter samples from its `counters` events,
// (node, counter) -> (t, value) in time order, as Localise (localise.h),
// the fabric map and the live localiser read them. Built from a whole run
// at once, or push by push (the controller: live_localiser.h).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reports/run_data.h"

namespace fdrill {

// A counter's name split at its first dot, as views of NAME: "fab0.rx_bytes"
// -> ("fab0", "rx_bytes"), "rank/2.cpu_seconds" -> ("rank/2",
// "cpu_seconds"); (NAME, "") without a dot.
inline std::pair<std::string_view, std::string_view> SplitCounterName(std::string_view name) {
  const size_t dot = name.find('.');
  if (dot == name.npos) return {name, ""};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

class CounterIndex {
 public:
  using Key = std::pair<std::string, std::string>;  // (node, counter)
  using Series = std::vector<std::pair<double, double>>;
  // Orders keys by (node, counter) and finds one by views of both, so that
  // adding a sample builds no Key (a controller adds one per counter per
  // push: bench/counters_bench.cc).
  struct KeyLess {
    using is_transparent = void;
    // < 0, 0, > 0 as a sorts before, with or after b.
    template <typename A, typename B>
    static int Compare(const A& a, const B& b) {
      const int by_node = std::string_view(a.first).compare(std::string_view(b.first));
      return by_node != 0 ? by_node
                          : std::string_view(a.second).compare(std::string_view(b.second));
    }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Compare(a, b) < 0;
    }
  };
  using SeriesMap = std::map<Key, Series, KeyLess>;
  CounterIndex() = default;
  explicit CounterIndex(const std::vector<Event>& events);
  // changing() points into series(): a copy points into its own; a move
  // keeps the map's nodes, and so the pointers.
  CounterIndex(const CounterIndex& other);
  CounterIndex& operator=(const CounterIndex& other);
  CounterIndex(CounterIndex&&) = default;
  CounterIndex& operator=(CounterIndex&&) = default;
  void Add(const Event& counters_event);
  // One node's sample, counter by counter: each is found by stepping on
  // from the one before when they come in ascending name order (as a
  // std::map or a JSON object iterates them; a lookup from the root
  // otherwise), so a whole sample costs a walk, not a search per counter
  // (bench/counters_bench.cc). Valid while the index is and nothing else
  // adds to it.
  class NodeSample {
   public:
    void Add(std::string_view counter, double value);

   private:
    friend class CounterIndex;
    NodeSample(CounterIndex& index, std::string_view node, double t);
    CounterIndex& index_;
    std::string_view node_;
    double t_;
    SeriesMap::iterator next_;  // where the next counter should be
  };
  NodeSample AddSample(std::string_view node, double t) { return NodeSample(*this, node, t); }
  // Drops the samples older than `before` that no window can tell apart
  // whose ends are each one of `bounds` or at or after `before`: Localise
  // reads a series only through CounterIncrease, its last sample at or
  // before each end, and whether its first is at or before the start. Of
  // the older samples it keeps each series' first and last, its last at or
  // before each bound and `before`, and every sample below the one kept
  // before it or above the one after (a reset, which CounterIncrease
  // counts apart); the rest lie on a rise or a flat, where the samples
  // either side say the same. The live localiser's memory (live_localiser.h).
  // Returns how many samples it dropped.
  size_t Compact(double before, std::vector<double> bounds);
  // Samples held, over every series.
  size_t samples() const;
  const SeriesMap& series() const { return series_; }
  // The series whose value changed at least once, in series()' order
  // (pointers into it, valid as long as this index). A counter that never
  // changed rose by 0 in every window, so the localisation, run once per
  // fault, looks only at these: at 1,000 idle agents that is none of them.
  const std::map<Key, const Series*, KeyLess>& changing() const { return changing_; }
  // Whether any rank's CPU time ("rank/<r>.cpu_seconds") was sampled.
  bool rank_cpu_sampled() const { return rank_cpu_sampled_; }

 private:
  SeriesMap series_;
  std::map<Key, const Series*, KeyLess> changing_;
  bool rank_cpu_sampled_ = false;
};

// The last sample at or before T, nullptr when every sample is later
// (series are in time order).
inline const std::pair<double, double>* LastSampleAtOrBefore(const CounterIndex::Series& s,
                                                             double t) {
  auto after =
      std::upper_bound(s.begin(), s.end(), t, [](double v, const auto& x) { return v < x.first; });
  return after == s.begin() ? nullptr : &*std::prev(after);
}

}  // namespace fdrill
