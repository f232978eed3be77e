#include "harness/controller/live_localiser.h"

#include <algorithm>
#include <set>

#include "reports/compound.h"

namespace fdrill {

void LiveLocaliser::OnCounters(const std::string& node, double t, const Json& counters) {
  if (!counters.is_object()) return;
  std::lock_guard<std::mutex> lock(mu_);
  // A JSON object iterates its keys in order: the sample is one walk.
  CounterIndex::NodeSample sample = counters_.AddSample(node, t);
  for (auto it = counters.begin(); it != counters.end(); ++it) {
    if (it.value().is_number()) sample.Add(it.key(), it.value().get<double>());
  }
}

void LiveLocaliser::OnRecord(const std::string& node, int rank, int attempt, int64_t iter,
                             double end_s, double time_ms, double wait_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  Iteration& it = iterations_[{attempt, iter}];
  it.iter = iter;
  it.attempt = attempt;
  it.end_s = std::max(it.end_s, end_s);
  it.time_ms = std::max(it.time_ms, time_ms + wait_ms);
  it.start_s = it.end_s - it.time_ms / 1000;
  const std::string& name = *node_names_.insert(node).first;
  it.ranks.push_back({.rank = rank, .node = name, .time_ms = time_ms, .wait_ms = wait_ms});
}

void LiveLocaliser::SetSwitches(std::vector<InventorySwitch> switches) {
  std::lock_guard<std::mutex> lock(mu_);
  switches_ = std::move(switches);
}

void LiveLocaliser::BaselineStarted(double t) {
  std::lock_guard<std::mutex> lock(mu_);
  baseline_from_ = t;
}

void LiveLocaliser::BaselineEnded(double t) {
  std::lock_guard<std::mutex> lock(mu_);
  baseline_to_ = t;
}

void LiveLocaliser::FaultOn(const std::string& id, double t, std::string scope) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [other, f] : on_) f.shared = true;
  on_[id] = Fault{.applied = t, .scope = std::move(scope), .shared = !on_.empty(), .own_from = t};
}

void LiveLocaliser::FaultOff(const std::string& id, std::optional<double> t) {
  std::lock_guard<std::mutex> lock(mu_);
  on_.erase(id);
  if (!t) return;
  for (auto& [other, f] : on_) {
    if (f.shared) f.own_from = std::max(f.own_from, *t + kCounterLagS);
  }
}

void LiveLocaliser::PruneLocked(double now) {
  const double keep_from = now - kKeepSeconds;
  std::erase_if(iterations_, [&](const auto& entry) {
    const Iteration& it = entry.second;
    const bool in_baseline = baseline_from_ && it.end_s >= *baseline_from_ &&
                             (!baseline_to_ || it.end_s <= *baseline_to_);
    return it.end_s < keep_from && !in_baseline;
  });
}

void LiveLocaliser::CompactLocked(double now) {
  if (last_compact_ && now - *last_compact_ < kCompactEvery) return;
  last_compact_ = now;
  std::vector<double> bounds;
  if (baseline_from_) bounds.push_back(*baseline_from_);
  if (baseline_to_) bounds.push_back(*baseline_to_);
  for (const auto& [id, f] : on_) bounds.push_back(f.applied);
  counters_.Compact(now - kCounterSlack, std::move(bounds));
}

size_t LiveLocaliser::counter_samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_.samples();
}

std::vector<LiveLocaliser::Update> LiveLocaliser::Tick(double now) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Update> out;
  if (last_tick_ && now - *last_tick_ < kTickEvery) return out;
  last_tick_ = now;
  PruneLocked(now);
  CompactLocked(now);
  if (on_.empty()) return out;
  std::vector<Iteration> series;
  series.reserve(iterations_.size());
  for (const auto& [key, it] : iterations_) series.push_back(it);
  std::sort(series.begin(), series.end(),
            [](const Iteration& a, const Iteration& b) { return a.end_s < b.end_s; });
  auto it = on_.lower_bound(next_);
  for (size_t turns = 0; turns < std::min(on_.size(), kMaxPerTick); ++turns, ++it) {
    if (it == on_.end()) it = on_.begin();
    auto& [id, f] = *it;
    LocaliseWindow w{.from_s = f.applied, .to_s = now};
    if (baseline_from_ && baseline_to_) {
      w.ref_from_s = *baseline_from_;
      w.ref_to_s = *baseline_to_;
    }
    const std::string cls = EvidenceClass(f.scope);
    std::optional<Culprit> c;
    if (!f.shared || cls.empty()) {
      c = Localise(counters_, series, w, switches_);
    } else {
      if (on_.size() == 1) {
        w.from_s = f.own_from;  // alone since the other's revert
      } else {
        for (const auto& [other, g] : on_) w.from_s = std::max(w.from_s, g.applied);
      }
      if (!(w.to_s > w.from_s)) continue;
      ClassCulprits own = LocaliseEachClass(counters_, series, w, switches_);
      c = cls == "link" ? std::move(own.link) : std::move(own.rank);
    }
    if (!c) continue;
    if (f.published && f.published->element == c->element &&
        f.published->confidence == c->confidence) {
      continue;
    }
    f.published = c;
    out.push_back({id, *c});
  }
  next_ = it == on_.end() ? "" : it->first;
  return out;
}

std::string LiveLocaliser::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const Fault*> named;
  for (const auto& [id, f] : on_) {
    if (f.published) named.push_back(&f);
  }
  std::stable_sort(named.begin(), named.end(),
                   [](const Fault* a, const Fault* b) { return a->applied > b->applied; });
  std::string out;
  std::set<std::string> seen;
  for (const Fault* f : named) {
    if (!seen.insert(f->published->element).second) continue;
    out +=
        (out.empty() ? "" : "; ") + f->published->element + " (" + f->published->confidence + ")";
  }
  return out;
}

}  // namespace fdrill
