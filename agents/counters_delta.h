// What a `counters` push carries (docs/reference/protocol.md): the whole sample, or
// only what changed since the push before it. A node's sample is ~20-80
// cumulative counters (netdev stats, IB port and hw counters, NVLink) and
// most of them stand still from one second to the next (errors, discards,
// the HCA's hw counters), so at 10,000 nodes the whole samples were most of
// the bytes and JSON the controller's one io thread parsed every second
// (docs/concepts/scale.md). A receiver applies a delta to the last whole sample it
// holds for the node; one that holds none ignores deltas until the next
// whole sample.
//
// A whole sample goes out first, after Reset (a session joined that has no
// base: AgentServer; a lease taken anew: another drill), every kFullEvery-th
// push (a receiver that missed a push is right again within that many
// intervals), and whenever a counter of the last sample is gone from this
// one (a delta cannot say "removed"). Single-threaded (the agent's).
#pragma once

#include "common/core/json.h"

namespace fdrill {

class CountersDelta {
 public:
  static constexpr int kFullEvery = 10;

  struct Push {
    Json counters;       // the whole sample, or only the changed counters
    bool delta = false;  // true: apply to the last whole sample
  };

  // What to push for `sample` (an object of name -> number); remembers it
  // as what the receivers hold now.
  Push Next(const Json& sample);
  // The next push is a whole sample.
  void Reset() { last_ = Json(); }

 private:
  Json last_;  // what the receivers hold; null: nothing
  int since_full_ = 0;
};

}  // namespace fdrill
