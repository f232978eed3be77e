// Which detector noticed each fault first (FaultStats::detectors): fdrill's
// live localisation against the NCCL job's own RAS service, from the run's
// `culprit`-derived numbers and its `ras` events (docs/reference/formats.md). A RAS
// sample counts for the first fault applied at or before it, up to the next
// fault's apply: RAS declares a peer dead only 60 s after it went silent,
// often after the fault was reverted. When agents listened to their RDMA
// devices (`ib_watch` events with devices, or any `ib_async`), the HCA's own
// word counts the same way: `ib_async`, the first async event in the
// fault's stretch other than PORT_ACTIVE (PORT_ERR when a port left ACTIVE,
// DEVICE_FATAL, LID_CHANGE...), on any node. Pure.
#pragma once

#include <vector>

#include "reports/run_data.h"
#include "reports/summary.h"

namespace fdrill {

void AddDetectors(const std::vector<Event>& events, std::vector<FaultStats>* faults);

}  // namespace fdrill
