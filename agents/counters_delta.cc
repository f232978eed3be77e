#include "agents/counters_delta.h"

namespace fdrill {

CountersDelta::Push CountersDelta::Next(const Json& sample) {
  bool full = !last_.is_object() || ++since_full_ >= kFullEvery;
  Json changed = Json::object();
  if (!full) {
    for (auto it = last_.begin(); it != last_.end() && !full; ++it)
      full = !sample.contains(it.key());
  }
  if (!full) {
    for (auto it = sample.begin(); it != sample.end(); ++it) {
      auto was = last_.find(it.key());
      if (was == last_.end() || *was != it.value()) changed[it.key()] = it.value();
    }
  }
  last_ = sample;
  if (full) {
    since_full_ = 0;
    return {sample, false};
  }
  return {std::move(changed), true};
}

}  // namespace fdrill
