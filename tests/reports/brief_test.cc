// BriefText: the lines `fdrill run` ends with (./demo.sh's last screen).
#include "reports/brief.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

Summary TwoFaultSummary() {
  Summary s;
  s.name = "quickstart";
  s.verdict = Verdict::kPass;
  s.baseline.busbw_median = 0.912;
  s.baseline.count = 600;
  FaultStats slow{.id = "slow-link", .kind = "link_rate", .node = "n1"};
  slow.slowdown = 5.7;
  slow.time_to_recover_s = 0.016;
  slow.localisation = Culprit{.element = "link n1 fab0"};
  FaultStats flap{.id = "link-flap", .kind = "link_flap", .node = "n2"};
  flap.slowdown = 12.25;
  s.faults = {slow, flap};
  s.residue_checked = true;
  return s;
}

TEST(BriefText, NamesTheVerdictEachFaultsSlowdownAndRecoveryAndTheReport) {
  const std::string text = BriefText(TwoFaultSummary(), "/runs/q-1");
  EXPECT_EQ(text.rfind("fdrill: quickstart — verdict pass (exit 0)\n", 0), 0u) << text;
  EXPECT_NE(text.find("busbw 0.912 GB/s median over 600 iterations"), std::string::npos) << text;
  EXPECT_NE(text.find("slow-link"), std::string::npos);
  EXPECT_NE(text.find("5.70x"), std::string::npos) << text;
  EXPECT_NE(text.find("0.016 s"), std::string::npos) << text;
  EXPECT_NE(text.find("link n1 fab0"), std::string::npos) << text;
  // A fault the job never recovered from says so, not 0.
  EXPECT_NE(text.find("12.25x"), std::string::npos) << text;
  EXPECT_NE(text.find("not recovered"), std::string::npos) << text;
  EXPECT_NE(text.find("fabric: left as found"), std::string::npos) << text;
  EXPECT_NE(text.find("data: intact"), std::string::npos) << text;
  // The report's path is the last line.
  const std::string last =
      "  report: /runs/q-1/report.md (also report.html, summary.json, junit.xml)\n";
  ASSERT_GE(text.size(), last.size());
  EXPECT_EQ(text.substr(text.size() - last.size()), last) << text;
}

TEST(BriefText, SaysWhatFailedResidueDataExpectationsAndAJobThatDied) {
  Summary s = TwoFaultSummary();
  s.verdict = Verdict::kFail;
  s.residue.push_back({.node = "n1", .object = "qdisc fab0", .before = "noqueue", .after = "tbf"});
  s.rollback.data_intact = false;
  s.rollback.wrong_elements = 7;
  s.faults[1].job_failed_after_s = 2.5;
  s.expectations.push_back(
      {.name = "max_time_to_recover", .limit = 10.0, .measured = 31.5, .pass = false});
  s.expectations.push_back({.name = "no_residue", .limit = true, .measured = true, .pass = true});
  for (int i = 0; i < 5; ++i) s.errors.push_back("e" + std::to_string(i));
  const std::string text = BriefText(s, "/r");
  EXPECT_NE(text.find("verdict fail (exit 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("fabric: NOT as found: 1 item(s) differ"), std::string::npos) << text;
  EXPECT_NE(text.find("data: 7 wrong elements"), std::string::npos) << text;
  EXPECT_NE(text.find("job failed 2.5 s"), std::string::npos) << text;
  EXPECT_NE(text.find("expectation failed: max_time_to_recover (limit 10, measured 31.5)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("no_residue"), std::string::npos) << "a passed expectation is not news";
  EXPECT_NE(text.find("error: e2"), std::string::npos);
  EXPECT_EQ(text.find("error: e3"), std::string::npos) << "one screen: the first three errors";
  EXPECT_NE(text.find("(2 more errors in report.md)"), std::string::npos) << text;
}

}  // namespace
}  // namespace fdrill
