#include "reports/counter_index.h"

#include <algorithm>
#include <iterator>

namespace fdrill {

CounterIndex::CounterIndex(const std::vector<Event>& events) {
  for (const Event& e : events) {
    if (e.type == "counters") Add(e);
  }
}

CounterIndex::CounterIndex(const CounterIndex& other) { *this = other; }

CounterIndex& CounterIndex::operator=(const CounterIndex& other) {
  if (this == &other) return *this;
  series_ = other.series_;
  rank_cpu_sampled_ = other.rank_cpu_sampled_;
  changing_.clear();
  for (const auto& [key, s] : other.changing_) changing_.emplace(key, &series_.at(key));
  return *this;
}

void CounterIndex::Add(const Event& e) {
  NodeSample sample = AddSample(e.node, e.t);
  for (const auto& [name, value] : e.counters) sample.Add(name, value);
}

CounterIndex::NodeSample::NodeSample(CounterIndex& index, std::string_view node, double t)
    : index_(index),
      node_(node),
      t_(t),
      next_(index.series_.lower_bound(std::pair<std::string_view, std::string_view>(node, ""))) {}

void CounterIndex::NodeSample::Add(std::string_view counter, double value) {
  const std::pair<std::string_view, std::string_view> key(node_, counter);
  SeriesMap& all = index_.series_;
  // How the key at `at` sorts against this one: < 0 before, 0 the same.
  auto order = [&](SeriesMap::iterator at) {
    return at == all.end() ? 1 : KeyLess::Compare(at->first, key);
  };
  int at_next = order(next_);
  // A counter the node no longer has sorts before this one: one step on.
  if (at_next < 0 && order(std::next(next_)) >= 0) at_next = order(++next_);
  // Not where the walk expects it (a new counter, one out of order, several
  // gone): a lookup, which also gives a new one's place.
  if (at_next != 0) {
    next_ = all.lower_bound(key);
    at_next = order(next_);
  }
  if (at_next > 0) {
    next_ = all.emplace_hint(next_, Key(node_, counter), Series());
    const auto [link, name] = SplitCounterName(counter);
    index_.rank_cpu_sampled_ =
        index_.rank_cpu_sampled_ || (link.starts_with("rank/") && name == "cpu_seconds");
  } else if (const Series& s = next_->second;
             s.back().second != value && s.front().second == s.back().second) {
    // Its first change (or one back to where it started): a series whose
    // first and last differ is listed already, and Compact keeps both.
    index_.changing_.try_emplace(next_->first, &next_->second);
  }
  next_->second.push_back({t_, value});
  ++next_;
}

size_t CounterIndex::Compact(double before, std::vector<double> bounds) {
  bounds.push_back(before);
  std::sort(bounds.begin(), bounds.end());
  size_t dropped = 0;
  for (auto& [key, s] : series_) {
    if (s.size() < 3 || !(s[1].first < before)) continue;
    size_t out = 1;  // s[0], the first, stays
    auto bound = bounds.begin();
    for (size_t i = 1; i < s.size(); ++i) {
      const auto& x = s[i];
      const bool last = i + 1 == s.size();
      while (bound != bounds.end() && *bound < x.first) ++bound;
      // x is the last sample at or before a bound in [x.t, the next's t).
      const bool ends_a_bound = bound != bounds.end() && (last || *bound < s[i + 1].first);
      const bool keep = last || !(x.first < before) || ends_a_bound ||
                        !(s[out - 1].second <= x.second && x.second <= s[i + 1].second);
      if (keep) {
        s[out++] = x;
      } else {
        ++dropped;
      }
    }
    s.resize(out);
  }
  return dropped;
}

size_t CounterIndex::samples() const {
  size_t n = 0;
  for (const auto& [key, s] : series_) n += s.size();
  return n;
}

}  // namespace fdrill
