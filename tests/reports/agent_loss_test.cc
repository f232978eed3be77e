// A lost agent in the report: agent_lost / agent_reconnected / faults_swept
// events decoded and turned into one sentence per fault left applied.
#include "reports/agent_loss.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/markdown_report.h"
#include "reports/run_dir.h"

namespace fdrill {
namespace {

using ::testing::HasSubstr;

// 2024-05-06 14:02:03.1 and 14:02:05.9 UTC.
constexpr int64_t kLostNs = 1715004123'100000000;
constexpr int64_t kSweptNs = 1715004125'900000000;

std::vector<Event> Events(const std::vector<std::string>& lines) {
  std::vector<Event> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto e = ParseEventLine(lines[i], "events.jsonl:" + std::to_string(i + 1));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    if (e.ok()) out.push_back(*e);
  }
  return out;
}

std::vector<std::string> LostAndSwept() {
  return {
      R"({"t":20,"type":"fault_apply","id":"cap","kind":"link_rate","node":"n1","target":"fab0","params":{},"reason":"r"})",
      R"({"t":20.1,"type":"fault_applied","id":"cap","kind":"link_rate","node":"n1","target":"fab0","verified":true})",
      R"({"t":25,"type":"error","node":"n1","message":"lost the agent: End of file"})",
      R"({"t":25,"type":"agent_lost","node":"n1","reason":"lost the agent: End of file","faults_left":["cap"],"wall_ns":)" +
          std::to_string(kLostNs) + "}",
      R"({"t":26.5,"type":"agent_reconnected","node":"n1","address":"198.19.0.2:7100","wall_ns":1})",
      R"({"t":26.5,"type":"faults_swept","node":"n1","ids":["cap"],"at_s":27.8,"wall_ns":)" +
          std::to_string(kSweptNs) + R"(,"by":"the restarted agent's journal sweep"})",
  };
}

TEST(AgentLoss, EventsDecodeAndAMalformedOneIsAnError) {
  std::vector<Event> events = Events(LostAndSwept());
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[3].ids, std::vector<std::string>{"cap"});
  EXPECT_EQ(events[3].wall_ns, kLostNs);
  EXPECT_EQ(events[5].at_s, 27.8);
  EXPECT_FALSE(ParseEventLine(R"({"t":1,"type":"agent_lost","node":"n1"})", "e:1").ok())
      << "faults_left is required";
  EXPECT_FALSE(
      ParseEventLine(R"({"t":1,"type":"faults_swept","node":"n1","ids":[3]})", "e:2").ok());
}

TEST(AgentLoss, NamesTheFaultLeftAndWhenTheSweepRevertedIt) {
  std::vector<AgentLoss> losses = AnalyzeAgentLosses(Events(LostAndSwept()));
  ASSERT_EQ(losses.size(), 1u);
  const AgentLoss& loss = losses[0];
  EXPECT_EQ(loss.node, "n1");
  EXPECT_EQ(loss.lost_at_s, 25);
  EXPECT_EQ(loss.back_at_s, 26.5);
  ASSERT_EQ(loss.faults_left.size(), 1u);
  EXPECT_EQ(loss.faults_left[0].kind, "link_rate");
  EXPECT_EQ(loss.faults_left[0].target, "fab0");
  EXPECT_EQ(loss.faults_left[0].swept_at_s, 27.8);
  EXPECT_EQ(LeftFaultText(loss, loss.faults_left[0]),
            "n1: fault cap (link_rate fab0) left applied while the agent was down "
            "14:02:03.1–14:02:05.9, reverted by the restarted agent's journal sweep");
}

TEST(AgentLoss, AnAgentThatNeverCameBackSaysNoSweepRevertedIt) {
  std::vector<std::string> lines = LostAndSwept();
  lines.resize(4);  // lost; nothing after
  std::vector<AgentLoss> losses = AnalyzeAgentLosses(Events(lines));
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_FALSE(losses[0].back_at_s.has_value());
  EXPECT_FALSE(losses[0].faults_left[0].swept_at_s.has_value());
  EXPECT_EQ(LeftFaultText(losses[0], losses[0].faults_left[0]),
            "n1: fault cap (link_rate fab0) was in force when the agent was lost at 14:02:03.1; "
            "the drill did not reach the agent again (a live one reverts it itself when its "
            "lease lapses, a dead one when it starts again) — the residue check says what is "
            "left");
  EXPECT_THAT(AgentLossText(losses[0]), HasSubstr("the drill did not reach it again"));
}

TEST(AgentLoss, ASweepOfAFaultTheLossDidNotListIsAddedAndOtherNodesAreNotMixedIn) {
  std::vector<std::string> lines = LostAndSwept();
  lines[3] = R"({"t":25,"type":"agent_lost","node":"n1","reason":"x","faults_left":[]})";
  lines.push_back(R"({"t":30,"type":"faults_swept","node":"n2","ids":["other"]})");
  std::vector<AgentLoss> losses = AnalyzeAgentLosses(Events(lines));
  ASSERT_EQ(losses.size(), 1u);
  ASSERT_EQ(losses[0].faults_left.size(), 1u);
  EXPECT_EQ(losses[0].faults_left[0].id, "cap");
  EXPECT_TRUE(losses[0].faults_left[0].swept_at_s.has_value());
}

TEST(AgentLoss, TheMarkdownReportHasTheSentence) {
  Summary s;
  s.agents_lost = AnalyzeAgentLosses(Events(LostAndSwept()));
  const std::string md = RenderMarkdown(s);
  EXPECT_THAT(md, HasSubstr("## Agents lost\n"));
  EXPECT_THAT(md, HasSubstr("  - n1: fault cap (link_rate fab0) left applied while the agent was "
                            "down 14:02:03.1–14:02:05.9"));
  EXPECT_EQ(RenderMarkdown(Summary{}).find("Agents lost"), std::string::npos);
}

}  // namespace
}  // namespace fdrill
