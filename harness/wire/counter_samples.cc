#include "harness/wire/counter_samples.h"

#include "harness/wire/protocol.h"

namespace fdrill {

std::optional<Json> CounterSamples::Apply(const std::string& node, const Json& push) {
  Json counters = push.value(proto::key::kCounters, Json::object());
  if (!counters.is_object()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (!push.value(proto::key::kDelta, false)) return last_[node] = std::move(counters);
  auto it = last_.find(node);
  if (it == last_.end()) return std::nullopt;
  for (auto c = counters.begin(); c != counters.end(); ++c) it->second[c.key()] = c.value();
  return it->second;
}

}  // namespace fdrill
