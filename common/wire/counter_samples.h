// The receiving end of the `counters` pushes (docs/reference/protocol.md): an
// agent sends a whole sample, then only what changed (agents/
// counters_delta.h). CounterSamples keeps each node's last whole sample and
// turns every push back into one, so what records and localises counters
// (events.jsonl, the live localiser) always sees whole samples.
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/core/json.h"

namespace fdrill {

class CounterSamples {
 public:
  // `push` is the push's body ({counters, delta?}). The node's whole sample
  // after it, or null for a delta from a node with no whole sample yet
  // (one comes within CountersDelta::kFullEvery pushes). Shared and never
  // changed while the caller holds it: a whole sample is kept and handed
  // out without a copy, and a delta patches it in place only when nobody
  // else holds it any more (the caller let go of the last one, as
  // DrillRun::OnPush does before the node's next push), else a copy.
  std::shared_ptr<const Json> Apply(const std::string& node, const Json& push);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Json>, std::less<>> last_;  // node -> its whole sample
};

}  // namespace fdrill
