// A run directory's files: plan.json and events.jsonl (their lines read by
// run_records.cc), inventory.json, the workload logs, metrics.jsonl
// (metrics_file.h), a campaign's index. With run_records.cc the only files
// of reports/ that parse JSON; nlohmann's exceptions stop here.
#include "reports/run_dir.h"

#include <filesystem>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/core/files.h"
#include "reports/metrics_file.h"

namespace fdrill {

namespace {

using nlohmann::json;

// Calls parse(line, "file:N") for each non-blank line of `text`
// (metrics.jsonl, which can be gigabytes, is read by metrics_file.h instead).
template <typename T, typename Parse>
Status ParseLines(std::string_view text, const char* file, Parse parse, std::vector<T>* out) {
  int number = 0;
  while (!text.empty()) {
    ++number;
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Result<T> parsed = parse(line, fmt::format("{}:{}", file, number));
    if (!parsed.ok()) return parsed.status();
    out->push_back(std::move(parsed).value());
  }
  return Status::Ok();
}
// inventory.json's text as an object, or why not.
Result<json> ParseInventory(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return InvalidArgument("inventory.json: not a JSON object");
  return j;
}

// The libraries each workload's ranks loaded, from workload.log and every
// tenant's workload-<name>.log; an unreadable log adds nothing.
void AddWorkloadLogs(const std::filesystem::path& root, Fingerprint* fingerprint) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    std::string tenant;
    if (name != kWorkloadLogFile) {
      if (!name.starts_with("workload-") || !name.ends_with(".log")) continue;
      tenant = name.substr(9, name.size() - 9 - 4);
    }
    Result<std::string> text = ReadWholeFile(entry.path());
    if (text.ok()) AddLoadedLibraries(*text, tenant, fingerprint);
  }
}

}  // namespace

Result<std::vector<InventorySwitch>> InventorySwitches(const json& j) {
  std::vector<InventorySwitch> out;
  if (!j.contains("switches")) return out;
  if (!j["switches"].is_array()) return InvalidArgument("inventory.json: switches is not a list");
  for (const json& sw : j["switches"]) {
    if (!sw.is_object() || !sw.value("name", json()).is_string()) {
      return InvalidArgument("inventory.json: a switch without a name");
    }
    InventorySwitch info{.name = sw["name"].get<std::string>(), .role = sw.value("role", "")};
    for (const json& p : sw.value("ports", json::array())) {
      if (!p.is_object()) continue;
      info.ports.push_back({.name = p.value("name", ""),
                            .to = p.value("to", ""),
                            .rate_bps = p.value("rate_bps", 0.0)});
    }
    out.push_back(std::move(info));
  }
  return out;
}

void MakeCountersWhole(std::vector<Event>* events) {
  std::map<std::string, std::map<std::string, double>> last;  // node -> its whole sample
  size_t kept = 0;
  for (size_t i = 0; i < events->size(); ++i) {
    Event& e = (*events)[i];
    if (e.type == "counters") {
      auto it = last.find(e.node);
      if (e.counters_delta.value_or(false)) {
        if (it == last.end()) continue;  // no whole sample to apply it to
        for (const auto& [name, value] : e.counters) it->second[name] = value;
      } else {
        it = last.insert_or_assign(
                     e.node, std::map<std::string, double>(e.counters.begin(), e.counters.end()))
                 .first;
      }
      e.counters.assign(it->second.begin(), it->second.end());
      e.counters_delta.reset();
    }
    if (kept != i) (*events)[kept] = std::move(e);
    ++kept;
  }
  events->resize(kept);
}

Result<RunData> LoadRunDir(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);
  RunData run;

  Result<std::string> plan_text = ReadWholeFile(root / kPlanFile);
  if (!plan_text.ok()) return plan_text.status().Annotate(dir);
  Result<Plan> plan = ParsePlan(*plan_text, kPlanFile);
  if (!plan.ok()) return plan.status().Annotate(dir);
  run.plan = std::move(plan).value();

  Result<std::string> events_text = ReadWholeFile(root / kEventsFile);
  if (!events_text.ok()) return events_text.status().Annotate(dir);
  Status s = ParseLines(*events_text, kEventsFile, ParseEventLine, &run.events);
  if (!s.ok()) return s.Annotate(dir);
  MakeCountersWhole(&run.events);

  std::error_code ec;
  if (fs::exists(root / kInventoryFile, ec)) {
    Result<std::string> text = ReadWholeFile(root / kInventoryFile);
    Result<json> inventory = text.ok() ? ParseInventory(*text) : Result<json>(text.status());
    Result<std::vector<InventorySwitch>> switches =
        inventory.ok() ? InventorySwitches(*inventory)
                       : Result<std::vector<InventorySwitch>>(inventory.status());
    if (switches.ok()) {
      run.switches = std::move(switches).value();
    } else {
      run.load_notes.push_back("the fabric map has no switches: " + switches.status().message());
    }
    if (inventory.ok()) run.fingerprint = FingerprintOf(*inventory);
  }
  AddWorkloadLogs(root, &run.fingerprint);
  s = ReadMetricsFile(root, &run.metrics, &run.load_notes);
  if (!s.ok()) return s.Annotate(dir);
  return run;
}

Result<std::optional<std::vector<std::string>>> CampaignRunDirs(const std::string& dir) {
  const std::filesystem::path index = std::filesystem::path(dir) / kCampaignIndexFile;
  std::error_code ec;
  if (!std::filesystem::exists(index, ec)) return std::optional<std::vector<std::string>>();
  Result<std::string> text = ReadWholeFile(index);
  if (!text.ok()) return text.status();
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    return FailedPrecondition(
        fmt::format("{}: not a JSON object (a campaign's index)", index.string()));
  std::vector<std::string> runs;
  const auto listed = j.find("runs");
  if (listed == j.end() || !listed->is_array()) return std::optional(runs);
  for (const nlohmann::json& r : *listed) {
    if (!r.is_object()) continue;
    const auto run_dir = r.find("dir");
    const auto exit_code = r.find("exit_code");
    if (run_dir == r.end() || !run_dir->is_string()) continue;
    if (exit_code == r.end() || !exit_code->is_number_integer() || *exit_code == 2) continue;
    runs.push_back((std::filesystem::path(dir) / run_dir->get<std::string>()).string());
  }
  return std::optional(runs);
}

}  // namespace fdrill
