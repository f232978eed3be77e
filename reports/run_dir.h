// Reading a run directory (docs/reference/formats.md): plan.json, events.jsonl and
// metrics.jsonl (or metrics.jsonl.zst: metrics_file.h). Strict about what is there: a line that is
// not JSON, or lacks a key the reports need, or has it with the wrong type, is an error naming
// "file:line" and the key, so a broken writer is found at once rather than
// measured around. Blank lines are skipped. A missing metrics.jsonl is not an
// error (the workload may never have started); it is noted in load_notes and
// the analysis then gives the verdict "error". No state; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "reports/metrics_file.h"
#include "reports/run_data.h"

namespace fdrill {

inline constexpr char kPlanFile[] = "plan.json";
inline constexpr char kEventsFile[] = "events.jsonl";
// Optional, for the fabric map only: a missing or unreadable one draws the
// nodes alone (noted in load_notes when it is there but broken).
inline constexpr char kInventoryFile[] = "inventory.json";
// Optional: the job's output tail, workload.log (a tenant's:
// workload-<name>.log), for the libraries its ranks loaded
// (AddLoadedLibraries in fingerprint.h).
inline constexpr char kWorkloadLogFile[] = "workload.log";

// inventory.json's "switches" (empty when it has none), from the object
// itself (the controller, which builds it).
Result<std::vector<InventorySwitch>> InventorySwitches(const Json& inventory);

Result<RunData> LoadRunDir(const std::string& dir);

// A campaign directory's index (`fdrill campaign`, docs/reference/formats.md).
inline constexpr char kCampaignIndexFile[] = "campaign.json";
// The runs campaign.json lists with exit 0 or 1, as paths under DIR, in
// order (a run the harness could not finish, exit 2, is not a measurement).
// nullopt when DIR has no campaign.json; an error naming it when it cannot be
// read or is not a JSON object.
Result<std::optional<std::vector<std::string>>> CampaignRunDirs(const std::string& dir);

// The pieces, for tests. `where` prefixes errors ("metrics.jsonl:12").
Result<Plan> ParsePlan(std::string_view text, std::string_view where);
Result<Event> ParseEventLine(std::string_view line, std::string_view where);
// Turns the `counters` events that hold only what changed (counters_delta)
// into whole samples, each from the node's counters events before it in
// `events` (timeline order); a delta with no whole sample before it is
// dropped. LoadRunDir does this to every run it reads.
void MakeCountersWhole(std::vector<Event>* events);
Result<MetricRecord> ParseMetricLine(std::string_view line, std::string_view where);

}  // namespace fdrill
