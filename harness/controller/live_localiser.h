// LiveLocaliser: the culprit while the drill runs. It keeps what the
// localisation (reports/localise.h) reads — every node's counter samples
// and the first workload's per-rank records — and, at most every
// kTickEvery, localises faults in force over [its apply, now] against the
// baseline phase, exactly as the report will: every fault each tick while
// at most kMaxPerTick are in force, otherwise kMaxPerTick of them per tick
// in turn (by id, round robin), so every fault is localised at least every
// ceil(in force / kMaxPerTick) ticks. A culprit that differs
// from the one last published for that fault is returned for a `culprit`
// event (docs/reference/formats.md); the report's time_to_localise_s is the first of
// them that names the fault's node (and link).
//
// Thread-safe: agent pushes feed it from the io thread, the timeline
// walker ticks it from the controller thread. Times are seconds on the
// drill's timeline (DrillState::t0_wall_ns). Memory: the baseline's
// iterations plus the last kKeepSeconds of the rest; of each counter, the
// last kCounterSlack seconds of samples and, older, only what a window
// from a fault in force, the baseline or a fault still to come can tell
// apart (CounterIndex::Compact, every kCompactEvery): a handful a series
// however long the drill runs, where every sample was kept before (16 B a
// counter a second: ~3.5 GB an hour at 1,000 nodes of 60 counters).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/core/json.h"
#include "reports/localise.h"

namespace fdrill {

class LiveLocaliser {
 public:
  static constexpr double kTickEvery = 0.25;
  static constexpr double kKeepSeconds = 120;
  // One localisation reads every node's counters under the lock the io
  // thread's pushes take: a drill with a fault on each of 1,000 nodes,
  // localised all at once, held the timeline and the lease renewals for
  // ~20 s per tick on the 2-core bench box (~20 ms each; issue 24,
  // docs/performance.md).
  static constexpr size_t kMaxPerTick = 4;
  // A fault's window starts at its scheduled time, which the walker may
  // reach late (a busy apply): samples this much older than the tick stay
  // whole. Compaction costs a pass over what is held, under the lock.
  static constexpr double kCounterSlack = 60;
  static constexpr double kCompactEvery = 10;

  void OnCounters(const std::string& node, double t, const Json& counters);
  // One rank's record of one iteration (attempt: the job's launch).
  void OnRecord(const std::string& node, int rank, int attempt, int64_t iter, double end_s,
                double time_ms, double wait_ms);
  // The fabric's cabling (inventory.json's switches), when known: a
  // culprit may then be a whole switch (reports/whole_switch.h).
  void SetSwitches(std::vector<InventorySwitch> switches);
  void BaselineStarted(double t);
  void BaselineEnded(double t);
  // SCOPE: what the fault's kind reaches (FaultSpec::scope). A fault that
  // shares its time with another is localised as the report does
  // (reports/compound.h): from its own class of evidence, over the seconds
  // it is alone once the other is reverted (from kCounterLagS after), else
  // over the seconds since the latest of those in force was applied.
  void FaultOn(const std::string& id, double t, std::string scope = "");
  // T: when it was reverted; without it a fault still in force goes on
  // being localised over the whole of its window.
  void FaultOff(const std::string& id, std::optional<double> t = std::nullopt);

  struct Update {
    std::string id;
    Culprit culprit;
  };
  // The faults whose culprit changed since last published; nothing when
  // called again within kTickEvery.
  std::vector<Update> Tick(double now);
  // What the progress line shows: the culprit last published for each fault
  // still in force, the latest applied first, each element once ("link n1
  // fab0 (high)", "rank 3 (n3) (medium); link n1 fab0 (high)"); empty when
  // none.
  std::string Current() const;
  // Counter samples held (every series together).
  size_t counter_samples() const;

 private:
  struct Fault {
    double applied = 0;
    std::string scope;
    // Another fault was in force during its window; its own evidence is
    // looked for from own_from (applied, or after the other's revert).
    bool shared = false;
    double own_from = 0;
    std::optional<Culprit> published;
  };
  void PruneLocked(double now);
  void CompactLocked(double now);

  mutable std::mutex mu_;
  CounterIndex counters_;
  std::vector<InventorySwitch> switches_;
  std::map<std::pair<int, int64_t>, Iteration> iterations_;  // (attempt, iter)
  // The node names iterations_' rank samples view (series.h's RankSample
  // holds a view): a set, so a name never moves once added.
  std::set<std::string, std::less<>> node_names_;
  std::optional<double> baseline_from_, baseline_to_;
  std::map<std::string, Fault> on_;  // in force, by id
  std::optional<double> last_tick_;
  std::optional<double> last_compact_;
  std::string next_;  // the id the next tick's turn starts from
};

}  // namespace fdrill
