#include "tests/reports/synthetic_run.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "reports/run_dir.h"
#include "tests/support/scratch_dir.h"

namespace fdrill::reports_test {

namespace fs = std::filesystem;
using nlohmann::json;

TempDir::TempDir() : path_(MakeTempDir("fdrill-reports-")) {
  if (path_.empty()) throw std::runtime_error("mkdtemp failed");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

Summary AnalyzeRun(const SyntheticRun& run) {
  TempDir dir;
  run.WriteTo(dir.path());
  Result<RunData> data = LoadRunDir(dir.path().string());
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  return data.ok() ? Analyze(*data) : Summary{};
}

SyntheticRun::SyntheticRun() {
  plan = {{"name", "synthetic"},
          {"nodes", {"n0", "n1", "n2", "n3"}},
          {"ranks", kRanks},
          {"recovery_window_iters", 5},
          {"expectations", json::object()}};
}

SyntheticRun SyntheticRun::Standard() {
  SyntheticRun run;
  run.plan["expectations"] = {{"max_slowdown", 5.0},
                              {"max_time_to_recover_s", 10.0},
                              {"no_residue", true},
                              {"data_intact", true}};
  run.AddEvent(0.0, "drill_start", {{"name", "synthetic"}});
  run.AddEvent(0.5, "phase_start", {{"phase", "baseline"}});
  run.AddEvent(15.0, "phase_end", {{"phase", "baseline"}});
  run.AddEvent(15.0, "phase_start", {{"phase", "slow-link"}});
  run.AddEvent(14.99, "fault_apply",
               {{"id", "slow-link"}, {"kind", "link_rate"}, {"node", "n2"}, {"target", "fab0"}});
  run.AddEvent(15.0, "fault_applied",
               {{"id", "slow-link"},
                {"kind", "link_rate"},
                {"node", "n2"},
                {"target", "fab0"},
                {"verified", true}});
  run.AddEvent(19.99, "fault_revert", {{"id", "slow-link"}, {"node", "n2"}});
  run.AddEvent(20.0, "fault_reverted", {{"id", "slow-link"}, {"node", "n2"}, {"verified", true}});
  run.AddEvent(20.0, "phase_end", {{"phase", "slow-link"}});
  run.AddEvent(20.0, "phase_start", {{"phase", "recovery"}});
  run.AddEvent(run.end_s + 0.5, "phase_end", {{"phase", "recovery"}});
  for (int r = 0; r < kRanks; ++r) {
    run.AddEvent(run.end_s + 0.6, "workload_exit",
                 {{"node", "n" + std::to_string(r)}, {"exit_code", 0}});
  }
  run.AddEvent(run.end_s + 0.7, "residue", {{"items", json::array()}});
  run.AddEvent(run.end_s + 0.8, "drill_end", {{"status", "completed"}});
  return run;
}

SyntheticRun SyntheticRun::SlowN2(double until_s) {
  SyntheticRun run = Standard();
  run.slow.push_back({.from_s = 15.0, .to_s = until_s, .factor = 3.0, .culprit_node = "n2"});
  return run;
}

void SyntheticRun::AddEvent(double t, const std::string& type, json fields) {
  fields["t"] = t;
  fields["type"] = type;
  events.push_back(std::move(fields));
}

void SyntheticRun::DropEvents(const std::string& type) {
  std::erase_if(events, [&](const json& e) { return e["type"] == type; });
}

std::vector<std::string> SyntheticRun::MetricLines() const {
  std::vector<std::string> lines;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  double t = start_s;
  for (int64_t iter = 0; t < end_s; ++iter) {
    double factor = 1;
    std::string culprit = "n0";
    for (const SlowSpan& s : slow) {
      if (t >= s.from_s && t < s.to_s) {
        factor = s.factor;
        culprit = s.culprit_node;
      }
    }
    double time_ms = kBaseMs * factor / speed * (1 + jitter(rng));
    double end = t + time_ms / 1000;
    for (const Stall& s : stalls) {
      if (s.at_s >= t && s.at_s < end) {
        end = s.until_s;
        time_ms = (end - t) * 1000;
      }
    }
    for (int rank = 0; rank < kRanks; ++rank) {
      const std::string node = "n" + std::to_string(rank);
      // The culprit's rank takes the whole time; the others wait 1 % less.
      // In a slow span the others spend part of it waiting for the culprit
      // in the line-up before the collective (it arrives last); outside
      // one nobody waits.
      const double wait_ms = factor > 1 && node != culprit ? (factor - 1) * kBaseMs / 2 : 0;
      const double rank_ms = node == culprit ? time_ms : time_ms * 0.99 - wait_ms;
      const double algbw = static_cast<double>(kBytes) / rank_ms / 1e6;
      auto w = wrong.find({iter, rank});
      json record = {{"rank", rank},
                     {"nranks", kRanks},
                     {"host", node},
                     {"node", node},
                     {"iter", iter},
                     {"op", "all_reduce"},
                     {"dtype", "float32"},
                     {"redop", "sum"},
                     {"bytes", kBytes},
                     {"count", kBytes / 4},
                     {"wall_ns", static_cast<int64_t>((1.7e9 + end) * 1e9)},
                     {"mono_ns", static_cast<int64_t>(end * 1e9)},
                     {"time_ms", rank_ms},
                     {"wait_ms", wait_ms},
                     {"algbw_gbps", algbw},
                     {"busbw_gbps", algbw * 1.5},
                     {"wrong", w == wrong.end() ? 0 : w->second},
                     {"t", end}};
      lines.push_back(record.dump());
    }
    t = end;
  }
  return lines;
}

void SyntheticRun::WriteTo(const fs::path& dir) const {
  WriteText(dir / "plan.json", plan.dump(2));
  std::vector<json> sorted = events;
  std::stable_sort(sorted.begin(), sorted.end(), [](const json& a, const json& b) {
    return a["t"].get<double>() < b["t"].get<double>();
  });
  std::string text;
  for (const json& e : sorted) text += e.dump() + "\n";
  WriteText(dir / "events.jsonl", text);
  text.clear();
  for (const std::string& line : MetricLines()) text += line + "\n";
  WriteText(dir / "metrics.jsonl", text);
}

Result<Summary> WriteWithReports(const SyntheticRun& run, const fs::path& dir) {
  run.WriteTo(dir);
  return WriteReports(dir.string());
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace fdrill::reports_test
