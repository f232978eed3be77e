#include "common/wire/counter_samples.h"

#include "common/wire/protocol.h"

namespace fdrill {

std::shared_ptr<const Json> CounterSamples::Apply(const std::string& node, const Json& push) {
  auto counters = push.find(proto::key::kCounters);
  if (counters == push.end() || !counters->is_object()) return nullptr;
  const bool delta = push.value(proto::key::kDelta, false);
  std::lock_guard<std::mutex> lock(mu_);
  if (!delta) return last_[node] = std::make_shared<Json>(*counters);
  auto it = last_.find(node);
  if (it == last_.end()) return nullptr;
  std::shared_ptr<Json>& whole = it->second;
  // Only Apply hands out references, under mu_: a count of 1 is this map's
  // alone, and nobody can take another before the patch is done.
  if (whole.use_count() > 1) whole = std::make_shared<Json>(*whole);
  for (auto c = counters->begin(); c != counters->end(); ++c) (*whole)[c.key()] = c.value();
  return whole;
}

}  // namespace fdrill
