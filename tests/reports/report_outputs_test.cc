// report.html and junit.xml as WriteReports writes them, and the counters
// the reports read from `counters` events.
#include <algorithm>
#include <regex>
#include <tuple>

#include <gtest/gtest.h>

#include "reports/analysis.h"
#include "reports/html_report.h"
#include "reports/junit_report.h"
#include "reports/report.h"
#include "reports/svg_plot.h"
#include "tests/reports/mini_xml.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::ParseXml;
using reports_test::ReadText;
using reports_test::SyntheticRun;
using reports_test::TempDir;
using reports_test::WriteWithReports;
using reports_test::XmlDocument;
using reports_test::XmlElement;

// The Standard drill plus a second fault, "flap<1>", on n1 at 30–32 s: two
// windows to shade, and an id that must be escaped.
SyntheticRun TwoFaults() {
  SyntheticRun run = SyntheticRun::SlowN2(22.0);
  run.AddEvent(30.0, "fault_applied",
               {{"id", "flap<1>"}, {"kind", "link_flap"}, {"node", "n1"}, {"verified", true}});
  run.AddEvent(32.0, "fault_reverted", {{"id", "flap<1>"}, {"node", "n1"}, {"verified", true}});
  return run;
}

std::string WriteAndRead(const SyntheticRun& run, const TempDir& dir, const char* file) {
  Result<Summary> s = WriteWithReports(run, dir.path());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return ReadText(dir.path() / file);
}

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(HtmlReport, IsOneOfflineFileWithShadedFaultWindowsAndTheTables) {
  TempDir dir;
  const std::string html = WriteAndRead(TwoFaults(), dir, kHtmlReportFile);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_EQ(Count(html, "<svg"), 2u);  // busbw and iteration time
  EXPECT_EQ(Count(html, "</svg>"), 2u);
  // Each fault window is shaded in both charts, its id escaped.
  EXPECT_EQ(Count(html, "<rect class=\"fault-window\" data-fault=\"slow-link\""), 2u);
  EXPECT_EQ(Count(html, "<rect class=\"fault-window\" data-fault=\"flap&lt;1&gt;\""), 2u);
  EXPECT_EQ(html.find("flap<1>"), std::string::npos);
  // One line per rank per chart; phase boundaries; the baseline band.
  EXPECT_EQ(Count(html, "<polyline class=\"series\""), 8u);
  EXPECT_GE(Count(html, "<g class=\"phase\">"), 6u);
  EXPECT_NE(html.find(">band low</text>"), std::string::npos);
  // Nothing from elsewhere: no links, scripts, fonts or images.
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  std::smatch m;
  EXPECT_FALSE(std::regex_search(html, m, std::regex(R"((src|href)="(?!data:))"))) << m.str();
  // The tables and the verdict.
  for (const char* part : {"<h2>Phases</h2>", "<h2>Faults</h2>", "<h2>Expectations</h2>",
                           "<h2>Residue</h2>", "<h2>Errors</h2>", "<span class=\"badge",
                           "<td>slow-link</td><td>link_rate</td>", "rank 2 (n2)"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(html.find("<h2>Links</h2>"), std::string::npos);  // no counters were sampled
}

// A job that died and was relaunched: each rank's line breaks across the
// time nothing ran, and that time is shaded as the job being down.
TEST(HtmlReport, LinesBreakAcrossAGapAndTheJobDownTimeIsShaded) {
  RunData run;
  run.plan.nodes = {"n0", "n1"};
  for (int rank = 0; rank < 2; ++rank) {
    for (double t : {1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 11.0, 12.0}) {
      run.metrics.push_back({.rank = rank,
                             .nranks = 2,
                             .node = "n" + std::to_string(rank),
                             .iter = static_cast<int64_t>(t),
                             .attempt = t > 6 ? 1 : 0,
                             .bytes = 1000000,
                             .time_ms = 50,
                             .busbw_gbps = 1,
                             .t = t});
    }
  }
  run.events.push_back({.t = 5.5, .type = "workload_failed", .reason = "rank 1 exited 1"});
  run.events.push_back({.t = 9.9, .type = "workload_restart"});
  const std::string html = RenderHtml(Analyze(run), run);
  EXPECT_EQ(Count(html, "<polyline class=\"series\""), 8u);  // 2 ranks x 2 segments x 2 charts
  EXPECT_EQ(Count(html, "<rect class=\"job-down\""), 2u);
  EXPECT_NE(html.find("job down from 5.50 s (rank 1 exited 1), relaunched job reporting at 9.90 s"),
            std::string::npos);
}

TEST(HtmlReport, ErrorRunWithoutMetricsStillRenders) {
  TempDir dir;
  SyntheticRun run = SyntheticRun::Standard();
  run.end_s = run.start_s;  // no iteration at all
  const std::string html = WriteAndRead(run, dir, kHtmlReportFile);
  EXPECT_NE(html.find("badge error"), std::string::npos);
  EXPECT_NE(html.find("No iteration was recorded."), std::string::npos);
  EXPECT_TRUE(html.ends_with("</html>\n"));
}

TEST(DownsampleMinMax, KeepsEverySpikeWithinThePointBudget) {
  std::vector<XY> points;
  for (int i = 0; i < 250'000; ++i) points.push_back({i * 0.001, 10.0 + (i % 7) * 0.01});
  points[123'457].y = 0.5;  // a stall
  points[200'001].y = 99;   // a spike
  std::vector<XY> kept = DownsampleMinMax(points, 2000);
  EXPECT_LE(kept.size(), 2000u);
  EXPECT_GE(kept.size(), 1990u);
  EXPECT_TRUE(
      std::is_sorted(kept.begin(), kept.end(), [](const XY& a, const XY& b) { return a.x < b.x; }));
  auto has = [&](double y) {
    return std::any_of(kept.begin(), kept.end(), [&](const XY& p) { return p.y == y; });
  };
  EXPECT_TRUE(has(0.5));
  EXPECT_TRUE(has(99));
  EXPECT_EQ(DownsampleMinMax({{0, 1}, {1, 2}}, 2000).size(), 2u);
}

TEST(NiceTicks, StepsOfOneTwoOrFive) {
  EXPECT_EQ(NiceTicks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(NiceTicks(0, 41, 5), (std::vector<double>{0, 10, 20, 30, 40, 50}));
  EXPECT_EQ(NiceTicks(0, 41, 4), (std::vector<double>{0, 20, 40, 60}));
}

int CountCases(const XmlDocument& doc) {
  return static_cast<int>(std::count_if(doc.elements.begin(), doc.elements.end(),
                                        [](const XmlElement& e) { return e.name == "testcase"; }));
}

const XmlElement* Child(const XmlDocument& doc, const std::string& testcase_name,
                        const std::string& child) {
  for (size_t i = 0; i < doc.elements.size(); ++i) {
    const XmlElement& e = doc.elements[i];
    if (e.name != "testcase" || e.attributes.at("name") != testcase_name) continue;
    for (size_t j = i + 1; j < doc.elements.size() && doc.elements[j].parent != "testsuite"; ++j) {
      if (doc.elements[j].name == child) return &doc.elements[j];
    }
    return nullptr;
  }
  return nullptr;
}

TEST(JunitXml, OneTestcasePerExpectationPlusHarnessWithFailures) {
  TempDir dir;
  Result<Summary> s = WriteWithReports(SyntheticRun::SlowN2(1e9), dir.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->verdict, Verdict::kFail);
  const XmlDocument doc = ParseXml(ReadText(dir.path() / kJunitFile));
  ASSERT_EQ(doc.error, "");
  ASSERT_EQ(doc.elements[0].name, "testsuite");
  EXPECT_EQ(doc.elements[0].attributes.at("name"), "fdrill.synthetic");
  EXPECT_EQ(CountCases(doc), static_cast<int>(s->expectations.size()) + 1);
  EXPECT_EQ(doc.elements[0].attributes.at("tests"), std::to_string(s->expectations.size() + 1));
  EXPECT_EQ(doc.elements[0].attributes.at("failures"), "1");
  EXPECT_EQ(doc.elements[0].attributes.at("errors"), "0");
  const XmlElement* failure = Child(doc, "time_to_recover[slow-link]", "failure");
  ASSERT_NE(failure, nullptr);
  EXPECT_NE(failure->attributes.at("message").find("measured null (not measured), limit 10"),
            std::string::npos);
  EXPECT_EQ(Child(doc, "slowdown[slow-link]", "failure"), nullptr);  // 3x is within 5x
  EXPECT_EQ(Child(doc, "harness", "error"), nullptr);
}

TEST(JunitXml, HarnessTestcaseErrorsWhenTheDrillCouldNotRun) {
  TempDir dir;
  SyntheticRun run = SyntheticRun::Standard();
  run.DropEvents("drill_end");
  run.AddEvent(16.0, "error", {{"message", "agent n3 <unreachable> & gone"}});
  Result<Summary> s = WriteWithReports(run, dir.path());
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->verdict, Verdict::kError);
  const XmlDocument doc = ParseXml(ReadText(dir.path() / kJunitFile));
  ASSERT_EQ(doc.error, "");
  EXPECT_EQ(CountCases(doc), static_cast<int>(s->expectations.size()) + 1);
  EXPECT_EQ(doc.elements[0].attributes.at("errors"), "1");
  const XmlElement* error = Child(doc, "harness", "error");
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->attributes.at("message"), "agent n3 &lt;unreachable&gt; &amp; gone");
  EXPECT_NE(error->text.find("no drill_end"), std::string::npos);
}

TEST(JunitXml, NoExpectationsIsOneHarnessTestcase) {
  Summary s;
  s.name = "bare";
  s.verdict = Verdict::kPass;
  const XmlDocument doc = ParseXml(RenderJunit(s));
  ASSERT_EQ(doc.error, "");
  EXPECT_EQ(CountCases(doc), 1);
}

TEST(MiniXml, RejectsWhatIsNotWellFormed) {
  EXPECT_EQ(ParseXml("<a><b x=\"1\"/></a>").error, "");
  EXPECT_NE(ParseXml("<a><b></a></b>").error, "");
  EXPECT_NE(ParseXml("<a x=1/>").error, "");
  EXPECT_NE(ParseXml("<a>1 < 2</a>").error, "");
  EXPECT_NE(ParseXml("<a>&nbsp;</a>").error, "");
  EXPECT_NE(ParseXml("<a/><b/>").error, "");
  EXPECT_NE(ParseXml("<a>").error, "");
}

// Raw deltas per phase in summary.json; per link and phase (traffic,
// drops, errors, carrier changes) in every report.
TEST(Counters, DeltaPerPhaseInEveryReport) {
  TempDir dir;
  SyntheticRun run = SyntheticRun::Standard();
  for (auto [t, downed, drops, sent] :
       {std::tuple{0.2, 4, 0, 0.0}, std::tuple{14.9, 4, 0, 1.5e10}, std::tuple{20.0, 7, 12, 1.6e10},
        std::tuple{40.0, 7, 12, 4.1e10}}) {
    run.AddEvent(t, "counters",
                 {{"node", "n2"},
                  {"counters",
                   {{"ib/mlx5_0/1.link_downed", downed},
                    {"fab0.rx_dropped", drops},
                    {"fab0.tx_bytes", sent}}}});
  }
  Result<Summary> s = WriteWithReports(run, dir.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto delta = [&](const std::string& phase, const std::string& counter) {
    for (const CounterDelta& c : s->counters) {
      if (c.phase == phase && c.counter == counter && c.node == "n2") return c.delta;
    }
    return -1.0;
  };
  EXPECT_EQ(delta("baseline", "ib/mlx5_0/1.link_downed"), 0);
  EXPECT_EQ(delta("slow-link", "ib/mlx5_0/1.link_downed"), 3);
  EXPECT_EQ(delta("slow-link", "fab0.rx_dropped"), 12);
  EXPECT_EQ(delta("recovery", "ib/mlx5_0/1.link_downed"), 0);
  ASSERT_EQ(s->links.size(), 2u);
  const LinkStats& fab0 = s->links[0];
  EXPECT_EQ(fab0.link, "fab0");
  ASSERT_EQ(fab0.phases.size(), 3u);
  EXPECT_EQ(fab0.phases[1].phase, "slow-link");
  EXPECT_EQ(fab0.phases[1].drops, 12);
  ASSERT_TRUE(fab0.phases[1].tx_gbps.has_value());
  EXPECT_NEAR(*fab0.phases[1].tx_gbps, 1.6, 1e-9);  // 1 GB in 5 s
  EXPECT_EQ(s->links[1].link, "ib/mlx5_0/1");
  EXPECT_EQ(s->links[1].phases[1].carrier_changes, 3);
  const std::string html = ReadText(dir.path() / kHtmlReportFile);
  EXPECT_NE(html.find("<h2>Links</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td>n2 ib/mlx5_0/1</td><td>slow-link</td>"), std::string::npos);
  const std::string md = ReadText(dir.path() / kReportFile);
  EXPECT_NE(md.find("| n2 ib/mlx5_0/1 | — | 0 | 0 | 0 | 3 | 0 |"), std::string::npos) << md;
  EXPECT_NE(
      md.find("| n2 fab0 | baseline 8.28, slow-link 1.6, recovery 9.76 | 12 | 0 | 0 | 0 | 0 |"),
      std::string::npos)
      << md;
  EXPECT_NE(ReadText(dir.path() / kSummaryFile).find("\"counter\": \"ib/mlx5_0/1.link_downed\""),
            std::string::npos);
}

TEST(Counters, ANonNumericCounterNamesFileLineAndKey) {
  TempDir dir;
  SyntheticRun run = SyntheticRun::Standard();
  run.AddEvent(0.2, "counters", {{"node", "n2"}, {"counters", {{"link_downed", "many"}}}});
  Result<Summary> s = WriteWithReports(run, dir.path());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("events.jsonl:2: key \"counters\""), std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace fdrill
