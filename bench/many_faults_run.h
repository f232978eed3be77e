// A run directory shaped like bench/scale_drill.sh's at N agents
// (docs/performance.md, "A whole drill at 1,000 agents"): nodes f0..f<N-1>,
// a 3 s baseline, 3 s with a link_rate fault on fab0 of every node (N
// faults, applied and reverted one node after another as the controller's
// fan-out does), 3 s recovery; every node's counters each second (the
// agents' telemetry, most of events.jsonl) and one rank's nccl-tests rows
// every 50 ms. The faulted link's qdisc_overlimits rise while its fault is
// on, so the localisation finds evidence. Deterministic for a given N.
#pragma once

#include <filesystem>

namespace fdrill::bench {

// Writes plan.json, events.jsonl and metrics.jsonl into DIR (which exists).
// Exits 2 when a file cannot be written (a benchmark's setup, not a result).
void WriteManyFaultsRun(const std::filesystem::path& dir, int nodes);

}  // namespace fdrill::bench
