// Faults in force at the same time. A drill an operator writes overlaps
// faults (a leaf uplink flapping while a rank is paused); measured over its
// own window each would be charged for the other's effect, the job's lost
// GPU·s counted once per fault, and both named after whichever signal is
// loudest. Here each fault of an overlap is measured over the seconds it
// alone was in force, where there are enough of them (kMinAloneS); the
// seconds two or more were in force together are a compound window with
// numbers of its own; every second of the job is charged to one fault or
// one window, never two. Definitions: reports/README.md.
#pragma once

#include <vector>

#include "reports/counter_index.h"
#include "reports/run_data.h"
#include "reports/series.h"
#include "reports/summary.h"

namespace fdrill {

struct Span {
  double from_s = 0;
  double to_s = 0;
  double length() const { return to_s - from_s; }
};

// The pieces of WHOLE that no span of CUT covers, in order.
std::vector<Span> Subtract(Span whole, const std::vector<Span>& cut);

// The job's rate over several spans: work done over the time they cover
// (TimeWeightedBusbw's, summed); nullopt when no iteration overlaps them.
std::optional<double> TimeWeightedBusbw(const std::vector<Iteration>& series,
                                        const std::vector<Span>& spans);

// A fault needs this many seconds alone in force for its numbers to come
// from them: the agents push counters once a second, so fewer hold at most
// one sample of its own.
constexpr double kMinAloneS = 2.0;
// A fault's seconds alone that begin at another's revert are localised from
// this much later: the first counters sample after the revert still holds
// up to a second of the other fault (the agents push once a second).
constexpr double kCounterLagS = 1.0;

// "link" for a kind whose evidence is a link's counters (scope interface,
// ib_port, gpu, nccl, switch), "rank" for one whose evidence is the ranks'
// (rank, node: a paused or starved process), "" when not known.
const char* EvidenceClass(const std::string& scope);

// Re-measures the faults of FAULTS that overlap another (AnalyzeFaults has
// measured each over its own window; BOUNDS[i] is where fault i's
// measurements stop) and returns one compound window per set of faults
// that were in force together, in time order. Faults that overlap nothing
// are left as they are.
std::vector<CompoundWindow> AttributeOverlaps(const CounterIndex& counters,
                                              const std::vector<Iteration>& series,
                                              const Baseline& baseline, int recovery_window_iters,
                                              const std::vector<double>& bounds,
                                              const std::vector<InventorySwitch>& switches,
                                              std::vector<FaultStats>* faults);

}  // namespace fdrill
