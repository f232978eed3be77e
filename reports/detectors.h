// Which detector noticed each fault first (FaultStats::detectors): fdrill's
// live localisation against the NCCL job's own RAS service, from the run's
// `culprit`-derived numbers and its `ras` events (docs/formats.md). A RAS
// sample counts for the first fault applied at or before it, up to the next
// fault's apply: RAS declares a peer dead only 60 s after it went silent,
// often after the fault was reverted. Pure.
#pragma once

#include <vector>

#include "reports/run_data.h"
#include "reports/summary.h"

namespace fdrill {

void AddDetectors(const std::vector<Event>& events, std::vector<FaultStats>* faults);

}  // namespace fdrill
