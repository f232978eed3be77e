#include "harness/wire/counter_samples.h"

#include "harness/wire/protocol.h"

namespace fdrill {

std::shared_ptr<const Json> CounterSamples::Apply(const std::string& node, const Json& push) {
  auto counters = push.find(proto::key::kCounters);
  if (counters == push.end() || !counters->is_object()) return nullptr;
  const bool delta = push.value(proto::key::kDelta, false);
  std::lock_guard<std::mutex> lock(mu_);
  if (!delta) return last_[node] = std::make_shared<const Json>(*counters);
  auto it = last_.find(node);
  if (it == last_.end()) return nullptr;
  auto whole = std::make_shared<Json>(*it->second);
  for (auto c = counters->begin(); c != counters->end(); ++c) (*whole)[c.key()] = c.value();
  return it->second = std::move(whole);
}

}  // namespace fdrill
