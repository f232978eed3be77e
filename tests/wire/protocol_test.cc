// The protocol's one table (common/wire/protocol.h) against its document
// (docs/reference/protocol.md), and FaultSpec, the fault both check and apply carry.
#include "common/wire/protocol.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

namespace fdrill::proto {
namespace {

std::string ProtocolDoc() {
  std::ifstream in(std::string(FDRILL_SOURCE_DIR) + "/docs/reference/protocol.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text of the section whose heading starts with `heading`, up to the next
// heading of its level.
std::string Section(const std::string& doc, const std::string& heading) {
  size_t from = doc.find("\n" + heading);
  if (from == std::string::npos) return "";
  size_t to = doc.find("\n## ", from + 1);
  return doc.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

// The names `pattern`'s first group matches in the section headed `heading`.
std::set<std::string> DocumentedNames(const std::string& heading, const char* pattern) {
  const std::string section = Section(ProtocolDoc(), heading);
  EXPECT_FALSE(section.empty()) << "docs/reference/protocol.md has no \"" << heading
                                << "\" section";
  std::set<std::string> names;
  const std::regex re(pattern);
  for (std::sregex_iterator it(section.begin(), section.end(), re), end; it != end; ++it)
    names.insert((*it)[1]);
  return names;
}

TEST(ProtocolDoc, HasASectionForEveryRequestTypeAndNoOther) {
  EXPECT_EQ(DocumentedNames("## 2. Requests", R"(\n### ([a-z_]+)( —|\n))"),
            std::set<std::string>(kRequestTypes.begin(), kRequestTypes.end()))
      << "docs/reference/protocol.md §2's \"### <type>\" headings and proto::kRequestTypes differ";
}

TEST(ProtocolDoc, HasARowForEveryPushTypeAndNoOther) {
  EXPECT_EQ(DocumentedNames("## 3. Pushes", R"(\n\| `([a-z_]+)` \|)"),
            std::set<std::string>(kPushTypes.begin(), kPushTypes.end()))
      << "docs/reference/protocol.md §3's table and proto::kPushTypes differ";
}

TEST(ProtocolDoc, NamesEveryBodyKey) {
  const std::string doc = ProtocolDoc();
  for (const char* k :
       {key::kNode,          key::kWallNs,       key::kHostname,       key::kVersion,
        key::kMgmtInterface, key::kActiveFaults, key::kTmpdir,         key::kFaults,
        key::kFaultId,       key::kKind,         key::kParams,         key::kMaxDurationMs,
        key::kVerified,      key::kVerify,       key::kAlreadyApplied, key::kTarget,
        key::kWasApplied,    key::kReverted,     key::kLinks,          key::kName,
        key::kAdminUp,       key::kQdisc,        key::kQdiscHandle,    key::kQdiscTree,
        key::kHost,          key::kStoppedRanks, key::kBurners,        key::kBurnCgroups,
        key::kFdrillRules,   key::kTtlMs,        key::kArgv,           key::kEnv,
        key::kMetricsDir,    key::kStarted,      key::kWatching,       key::kPid,
        key::kLog,           key::kStopFile,     key::kKill,           key::kRequested,
        key::kRunning,       key::kExitCode,     key::kLogTail,        key::kRanksKilled,
        key::kDir,           key::kRemoved,      key::kRecords,        key::kCounters,
        key::kRasAddr,       key::kIntervalMs,   key::kForMs,          key::kStop,
        key::kAnswered,      key::kRasStatus,    key::kRasError,       key::kDevices,
        key::kPorts,         key::kPort,         key::kState,          key::kPhysState,
        key::kLid,           key::kLinkLayer,    key::kDevice,         key::kEvent}) {
    // As a word: `host.burners`, `{started:false, watching}`.
    const std::regex word(std::string("(^|[^a-z_])") + k + "([^a-z_]|$)");
    EXPECT_TRUE(std::regex_search(doc, word))
        << "docs/reference/protocol.md never names the key \"" << k << "\"";
  }
}

TEST(FaultSpec, RoundTrips) {
  FaultSpec f{"slow", "link_rate", {{"interface", "fab0"}, {"rate", "1gbit"}}, 30000};
  Json j = f.ToJson();
  EXPECT_EQ(j[key::kFaultId], "slow");
  auto back = FaultSpec::FromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->fault_id, "slow");
  EXPECT_EQ(back->kind, "link_rate");
  EXPECT_EQ(back->params, f.params);
  EXPECT_EQ(back->max_duration_ms, 30000);
  // check's items carry no limit: none is sent, none is read.
  Json unlimited = FaultSpec{"slow", "link_rate"}.ToJson();
  EXPECT_FALSE(unlimited.contains(key::kMaxDurationMs));
  EXPECT_EQ(FaultSpec::FromJson(unlimited)->max_duration_ms, 0);
}

TEST(FaultSpec, RefusesAMalformedFaultNamingTheField) {
  struct Case {
    Json j;
    std::string says;
  };
  const std::vector<Case> cases = {
      // The key check sent before the one table: an "id" is not a fault_id.
      {{{"id", "slow"}, {"kind", "link_rate"}}, "needs a \"fault_id\""},
      {{{"fault_id", ""}, {"kind", "link_rate"}}, "\"fault_id\" is empty"},
      {{{"fault_id", "slow"}}, "needs a \"kind\""},
      {{{"fault_id", 5}, {"kind", "link_rate"}}, "\"fault_id\" has the wrong type: want a string"},
      {{{"fault_id", "slow"}, {"kind", "link_rate"}, {"params", "rate=1gbit"}},
       "\"params\" has the wrong type: want an object"},
      {{{"fault_id", "slow"}, {"kind", "link_rate"}, {"max_duration_ms", "5s"}},
       "\"max_duration_ms\" has the wrong type"},
      {{{"fault_id", "slow"}, {"kind", "link_rate"}, {"max_duration_ms", -1}}, "must be >= 0"},
      {Json::array(), "must be an object"},
  };
  for (const auto& c : cases) {
    auto f = FaultSpec::FromJson(c.j);
    ASSERT_FALSE(f.ok()) << c.j.dump();
    EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument) << c.j.dump();
    EXPECT_NE(f.status().message().find(c.says), std::string::npos)
        << c.j.dump() << ": " << f.status().message();
  }
}

}  // namespace
}  // namespace fdrill::proto
