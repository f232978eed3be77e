#include "agents/counters_delta.h"

namespace fdrill {
namespace {

// The counters of `sample` that are new or differ from `last`, into
// `changed`; false when a counter of `last` is gone from `sample`. Both are
// objects, whose keys nlohmann::json keeps sorted (a std::map): one walk
// side by side, no lookups (10,000 agents of a fake fleet do this each
// second on the controller's cores: docs/performance.md, section 3).
bool Diff(const Json& last, const Json& sample, Json& changed) {
  auto was = last.begin();
  for (auto it = sample.begin(); it != sample.end(); ++it) {
    if (was != last.end() && was.key() < it.key()) return false;  // `was` is gone
    if (was != last.end() && was.key() == it.key()) {
      if (*was != *it) changed[it.key()] = *it;
      ++was;
    } else {
      changed[it.key()] = *it;  // a new counter
    }
  }
  return was == last.end();
}

}  // namespace

CountersDelta::Push CountersDelta::Next(const Json& sample) {
  Json changed = Json::object();
  const bool full = !last_.is_object() || ++since_full_ >= kFullEvery || !sample.is_object() ||
                    !Diff(last_, sample, changed);
  if (full) {
    last_ = sample;
    since_full_ = 0;
    return {sample, false};
  }
  // What the receivers hold now: only the changed counters are written.
  for (auto it = changed.begin(); it != changed.end(); ++it) last_[it.key()] = *it;
  return {std::move(changed), true};
}

}  // namespace fdrill
