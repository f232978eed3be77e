#include "harness/controller/campaign.h"

#include <cctype>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/core/files.h"
#include "common/core/json.h"

namespace fdrill {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr char kIndex[] = "campaign.json";
constexpr char kScenario[] = "scenario.yaml";

std::string RunDirName(int index) { return fmt::format("run-{:02d}", index); }

std::string VerdictOf(const fs::path& run_dir) {
  auto text = ReadWholeFile(run_dir / "summary.json");
  if (!text.ok()) return "";
  const json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.value("verdict", json()).is_string() ? j["verdict"].get<std::string>()
                                                                 : "";
}

json IndexJson(const CampaignOptions& o, const CampaignResult& r) {
  json runs = json::array();
  for (const CampaignRun& run : r.runs) {
    runs.push_back({{"run", run.index},
                    {"dir", run.dir},
                    {"verdict", run.verdict},
                    {"exit_code", run.exit_code},
                    {"wall_s", run.wall_s}});
  }
  return {{"label", o.label}, {"scenario", kScenario},  {"repeat", o.repeat},
          {"runs", runs},     {"complete", r.complete}, {"stopped", r.stopped}};
}

// The runs an earlier invocation finished (summary.json written), from its
// index; the directory of one it did not finish is removed.
Result<std::vector<CampaignRun>> Finished(const fs::path& dir, const json& index) {
  std::vector<CampaignRun> out;
  for (const json& r : index.value("runs", json::array())) {
    if (!r.is_object()) continue;
    CampaignRun run{.index = r.value("run", 0),
                    .dir = r.value("dir", ""),
                    .verdict = r.value("verdict", ""),
                    .exit_code = r.value("exit_code", 2),
                    .wall_s = r.value("wall_s", 0.0)};
    if (run.index != static_cast<int>(out.size()) + 1 || run.dir != RunDirName(run.index)) break;
    if (!fs::exists(dir / run.dir / "summary.json") || run.exit_code == 2) break;
    out.push_back(run);
  }
  return out;
}

}  // namespace

Status CheckCampaignOptions(const CampaignOptions& o) {
  // The label names campaigns/LABEL/: one path component (no "..").
  if (Status s = CheckPathComponent(o.label); !s.ok())
    return InvalidArgument("--label " + s.message() + " (e.g. fw-28.39)");
  if (o.repeat < 1 || o.repeat > kMaxCampaignRuns) {
    return InvalidArgument(
        fmt::format("--repeat {}: from 1 to {} runs", o.repeat, kMaxCampaignRuns));
  }
  return Status::Ok();
}

Result<CampaignResult> RunCampaign(const CampaignOptions& o, const RunOneDrill& run_one,
                                   const std::atomic<bool>* abort) {
  if (Status s = CheckCampaignOptions(o); !s.ok()) return s;
  auto scenario = ReadWholeFile(o.scenario_file);
  if (!scenario.ok()) return scenario.status();
  const fs::path dir = fs::absolute(o.dir);
  std::error_code ec;
  std::vector<CampaignRun> done;
  if (fs::exists(dir / kIndex, ec)) {
    auto text = ReadWholeFile(dir / kIndex);
    if (!text.ok()) return text.status();
    const json index = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!index.is_object()) return InvalidArgument((dir / kIndex).string() + ": not a JSON object");
    if (index.value("label", "") != o.label) {
      return FailedPrecondition(dir.string() + " holds campaign \"" + index.value("label", "") +
                                "\", not \"" + o.label +
                                "\": use that --label to resume it, or another --out");
    }
    auto stored = ReadWholeFile(dir / kScenario);
    if (!stored.ok() || *stored != *scenario) {
      return FailedPrecondition(o.scenario_file + " differs from the scenario " + dir.string() +
                                " was run with (" + (dir / kScenario).string() +
                                "): a campaign runs one scenario; use another --out");
    }
    auto finished = Finished(dir, index);
    if (!finished.ok()) return finished.status();
    done = std::move(*finished);
    if (static_cast<int>(done.size()) > o.repeat) {
      return InvalidArgument(
          fmt::format("--repeat {}: {} holds {} finished runs already; give at "
                      "least {} to resume or extend it",
                      o.repeat, dir.string(), done.size(), done.size()));
    }
  } else if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    return FailedPrecondition(
        dir.string() + " exists and is not a campaign (no campaign.json): use another --out");
  } else {
    fs::create_directories(dir, ec);
    if (ec) return Internal("cannot create " + dir.string() + ": " + ec.message());
    if (auto s = WriteFileAtomically(dir / kScenario, *scenario); !s.ok()) return s;
  }

  CampaignResult result;
  result.runs = std::move(done);
  for (int i = static_cast<int>(result.runs.size()) + 1; i <= o.repeat; ++i) {
    if (abort != nullptr && abort->load()) {
      result.stopped = "stopped (Ctrl-C) before run " + std::to_string(i);
      break;
    }
    const fs::path run_dir = dir / RunDirName(i);
    fs::remove_all(run_dir, ec);  // an unfinished run of an earlier invocation
    // The index names the run before it starts: a campaign killed now
    // resumes by running it again.
    CampaignRun run{.index = i, .dir = RunDirName(i), .exit_code = 2};
    result.runs.push_back(run);
    if (auto s = WriteFileAtomically(dir / kIndex, DumpJson(IndexJson(o, result), 2) + "\n");
        !s.ok())
      return s;
    const auto start = std::chrono::steady_clock::now();
    const int code = run_one(run_dir.string());
    CampaignRun& r = result.runs.back();
    r.exit_code = code;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.verdict = VerdictOf(run_dir);
    if (code == 2 || r.verdict.empty()) {
      result.stopped = fmt::format(
          "run {} could not finish ({}): the fabric is not vouched for; see {}/events.jsonl, "
          "then rerun the same command to resume",
          i, r.verdict.empty() ? "no summary" : "verdict " + r.verdict, run_dir.string());
      break;
    }
  }
  result.complete = result.stopped.empty() && static_cast<int>(result.runs.size()) == o.repeat;
  if (auto s = WriteFileAtomically(dir / kIndex, DumpJson(IndexJson(o, result), 2) + "\n"); !s.ok())
    return s;
  return result;
}

int CampaignExitCode(const CampaignResult& r) {
  if (!r.complete) return 2;
  for (const CampaignRun& run : r.runs) {
    if (run.exit_code != 0) return 1;
  }
  return 0;
}

}  // namespace fdrill
