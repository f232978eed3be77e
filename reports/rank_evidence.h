// The ranks' signals of the localisation (localise.h, signals 3 and 3b):
// the rank its peers waited for in the collective's line-up, and the rank
// that got less CPU time than its peers. Pure functions over a run's
// iterations and counters, as Localise reads them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/counter_index.h"
#include "reports/localise.h"
#include "reports/run_data.h"

namespace fdrill {

struct RankEvidence {
  int rank = 0;
  std::string node;
  double caused = 0;      // ms of its peers' wait per second, in the window
  double ref_caused = 0;  // the same in the reference
  double next = 0;        // the next rank's, in the window
};

// Signal 3: the rank its peers waited for, when clear (rank_evidence.cc:
// kRankMinExcess ms/s more delay than in the reference, twice as much, and
// 15 % more than any other rank); nullopt otherwise.
std::optional<RankEvidence> LastToArrive(const std::vector<Iteration>& series,
                                         const LocaliseWindow& w);

struct CpuEvidence {
  int rank = 0;
  std::string node;
  double share = 1;      // its CPU rate in the window over its peers' median rate there
  double ref_share = 1;  // the same in the reference
  double inside = 1;     // the share of the time its rate was measured over in the window
};

// A rank's CPU rate measured over less than this share inside the window
// speaks only when the line-up names the same rank (Localise): the live
// view once named a rank "starved", high, 0.34 s into a leaf-down, from a
// second of CPU time 0.66 s of which came before the fault, while a
// straggler that lost its CPU is also the rank its peers wait for.
constexpr double kMinInside = 0.5;

// Signal 3b: the rank that got at most 85 % of its peers' median CPU rate
// in the window, 12 points less than in the reference (rank_evidence.cc
// says why within the window); nullopt otherwise. *SAMPLED is set when the
// agents sampled any rank's CPU time at all.
std::optional<CpuEvidence> StarvedRank(const CounterIndex& counters, const LocaliseWindow& w,
                                       bool* sampled);

// Whether some rank's CPU time was measured over at least kMinInside of its
// span inside W. Until one was (a live view's first second of a fault:
// ranks' CPU time comes once a second, with the counters) the CPU signal
// cannot speak, whatever it would say.
bool CpuMeasuredInside(const CounterIndex& counters, const LocaliseWindow& w);

// The evidence's words, as a culprit's evidence lists them.
std::string RankWords(const RankEvidence& r);
std::string CpuWords(const CpuEvidence& c);

}  // namespace fdrill
