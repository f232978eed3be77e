// WriteReports end to end: the files it writes honour the summary.json
// contract (docs/reference/summary-json.md) and report.md says what happened.
#include "reports/report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using nlohmann::json;
using reports_test::ReadText;
using reports_test::SyntheticRun;
using reports_test::TempDir;
using reports_test::WriteWithReports;

void ExpectKeys(const json& object, std::initializer_list<const char*> keys) {
  for (const char* key : keys) EXPECT_TRUE(object.contains(key)) << "missing key " << key;
}

TEST(WriteReports, SummaryJsonCarriesTheContractKeys) {
  TempDir dir;
  Result<Summary> summary = WriteWithReports(SyntheticRun::SlowN2(1e9), dir.path());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();

  json j = json::parse(ReadText(dir.path() / kSummaryFile));
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["name"], "synthetic");
  ExpectKeys(j, {"verdict", "phases", "faults", "residue", "rollback", "expectations", "baseline",
                 "errors"});
  ASSERT_EQ(j["phases"].size(), 3u);
  ExpectKeys(j["phases"][0],
             {"name", "start_s", "end_s", "iter_ms_p50", "iter_ms_p99", "busbw_gbps_p50"});
  ASSERT_EQ(j["faults"].size(), 1u);
  const json& f = j["faults"][0];
  ExpectKeys(f, {"id", "kind", "target", "applied_at_s", "reverted_at_s", "slowdown",
                 "time_to_impact_s", "time_to_recover_s", "stall_ms", "node", "culprit"});
  EXPECT_TRUE(f["time_to_recover_s"].is_null());  // it never recovered
  EXPECT_NEAR(f["slowdown"].get<double>(), 3.0, 0.05);
  EXPECT_EQ(f["culprit"], "n2");
  EXPECT_TRUE(j["residue"].is_array());
  EXPECT_TRUE(j["residue"].empty());
  ExpectKeys(j["rollback"], {"restarts", "iterations_lost", "data_intact"});
  EXPECT_EQ(j["rollback"]["data_intact"], true);
  ExpectKeys(j["baseline"], {"busbw_median", "band_low", "mad"});
  bool saw_ttr = false;
  for (const json& e : j["expectations"]) {
    ExpectKeys(e, {"name", "limit", "measured", "pass"});
    if (e["name"] == "time_to_recover[slow-link]") {
      saw_ttr = true;
      EXPECT_EQ(e["limit"], 10.0);
      EXPECT_TRUE(e["measured"].is_null());
      EXPECT_EQ(e["pass"], false);
    }
  }
  EXPECT_TRUE(saw_ttr);
}

TEST(WriteReports, ReportMdStatesVerdictTablesAndACleanFabric) {
  TempDir dir;
  Result<Summary> summary = WriteWithReports(SyntheticRun::SlowN2(22.0), dir.path());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->verdict, Verdict::kPass);
  EXPECT_EQ(ExitCodeForVerdict(summary->verdict), 0);

  std::string md = ReadText(dir.path() / kReportFile);
  EXPECT_NE(md.find("# fdrill report: synthetic — PASS"), std::string::npos) << md;
  EXPECT_NE(md.find("| baseline | 0.50 | 15.00 |"), std::string::npos) << md;
  // 2.95x, not 3: slowdown is time-weighted over the window, and the
  // iteration in flight at the apply ran at full speed in this synthetic run.
  EXPECT_NE(md.find("| slow-link | link_rate | n2 | fab0 | 15.00 | 20.00 | 2.95× |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| time_to_recover[slow-link] | 10 | 2."), std::string::npos) << md;
  EXPECT_NE(md.find("| PASS |"), std::string::npos);
  EXPECT_EQ(md.find("FAIL"), std::string::npos);
  EXPECT_NE(md.find("none — the fabric was left as found"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "report.md.partial"));
}

TEST(WriteReports, ReportMdListsResidueFailuresAndErrors) {
  TempDir dir;
  SyntheticRun run = SyntheticRun::Standard();
  run.DropEvents("residue");
  run.AddEvent(41.0, "residue",
               {{"items",
                 {{{"node", "n2"},
                   {"object", "qdisc fab0"},
                   {"before", "noqueue"},
                   {"after", "tbf|rate"}}}}});
  run.AddEvent(16.0, "error", {{"message", "agent n3 unreachable"}});
  Result<Summary> summary = WriteWithReports(run, dir.path());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  std::string md = ReadText(dir.path() / kReportFile);
  EXPECT_NE(md.find("— ERROR"), std::string::npos) << md;
  EXPECT_NE(md.find("| n2 | qdisc fab0 | noqueue | tbf\\|rate |"), std::string::npos) << md;
  EXPECT_NE(md.find("| no_residue | 0 | 1 | **FAIL** |"), std::string::npos) << md;
  EXPECT_NE(md.find("- agent n3 unreachable"), std::string::npos) << md;
  EXPECT_EQ(md.find("left as found"), std::string::npos);
}

TEST(WriteReports, AnUnreadableRunDirectoryIsAnErrorStatus) {
  TempDir dir;
  Result<Summary> summary = WriteReports((dir.path() / "absent").string());
  EXPECT_EQ(summary.status().code(), StatusCode::kNotFound);
}

TEST(ExitCodeForVerdict, PassFailError) {
  EXPECT_EQ(ExitCodeForVerdict(Verdict::kPass), 0);
  EXPECT_EQ(ExitCodeForVerdict(Verdict::kFail), 1);
  EXPECT_EQ(ExitCodeForVerdict(Verdict::kError), 2);
  EXPECT_STREQ(VerdictName(Verdict::kFail), "fail");
}

}  // namespace
}  // namespace fdrill
