// The summary metrics a scenario's `expect.metrics` may name: per fault
// (no dot) and per run (dotted, as in summary.json). The scenario loader
// accepts exactly these; the reports evaluate them (reports/verdict.cc,
// where tests/reports checks each one is measured).
#pragma once

#include <array>
#include <string_view>

namespace fdrill {

inline constexpr std::array<std::string_view, 11> kExpectableMetrics = {"slowdown",
                                                                        "time_to_impact_s",
                                                                        "time_to_recover_s",
                                                                        "stall_ms",
                                                                        "job_failed_after_s",
                                                                        "lost_gpu_s",
                                                                        "baseline.busbw_median",
                                                                        "rollback.restarts",
                                                                        "rollback.iterations_lost",
                                                                        "rollback.wrong_elements",
                                                                        "residue.count"};

}  // namespace fdrill
