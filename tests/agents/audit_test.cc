// AuditLog writes its line field by field: it must read back as the JSON
// object a reader expects, whatever the strings hold, keys sorted as a Json
// object's dump would have them.
#include "agents/audit.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

TEST(AuditLog, ALineReadsBackAsTheRequestItRecordsWhateverItsStringsHold) {
  const std::filesystem::path dir = MakeTempDir("fdrill-audit-");
  ASSERT_FALSE(dir.empty());
  const auto path = dir / "audit.jsonl";
  Json apply = MakeRequest("apply", 7,
                           {{"fault_id", "cut \"n1\""},
                            {"kind", "link_rate"},
                            {"params", {{"interface", "fab0"}, {"rate", "1gbit"}}},
                            {"drill", "d1"}});
  Json check = MakeRequest("check", 8, {{"faults", Json::array({{{"fault_id", "a"}}})}});
  {
    AuditLog log(path.string());
    (void)log.Record(42, "198.19.0.254:5000", "CN=fdrill-controller", apply, "ok");
    (void)log.Record(43, "peer\n2", "", check, "refused: \"why\"\tand a tab");
  }
  std::vector<Json> lines = ReadJsonLines(path.string());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], Json({{"wall_ns", 42},
                            {"peer", "198.19.0.254:5000"},
                            {"subject", "CN=fdrill-controller"},
                            {"type", "apply"},
                            {"id", 7},
                            {"result", "ok"},
                            {"fault_id", "cut \"n1\""},
                            {"kind", "link_rate"},
                            {"params", {{"interface", "fab0"}, {"rate", "1gbit"}}}}));
  EXPECT_EQ(lines[1]["faults"], check["faults"]);
  EXPECT_EQ(lines[1]["peer"], "peer\n2");
  EXPECT_EQ(lines[1]["result"], "refused: \"why\"\tand a tab");
  EXPECT_FALSE(lines[1].contains("kind"));
  // Each line is what dumping that object gives: sorted keys, no spaces.
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, lines[0].dump());
  std::filesystem::remove_all(dir);
}

// Issue 48: the audit log wrote nothing on a full disk and said nothing.
// /dev/full fails every write with ENOSPC, for root too.
TEST(AuditLog, ALineThatCannotBeWrittenIsReportedAndTheNextOneTriesAgain) {
  AuditLog full("/dev/full");
  Status s = full.Record(1, "p", "s", MakeRequest("hello", 1), "ok");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(full.error().find("No space left on device"), std::string::npos) << full.error();
  EXPECT_FALSE(full.Record(2, "p", "s", MakeRequest("hello", 2), "ok").ok());
  EXPECT_EQ(full.dropped(), 2u);

  const std::filesystem::path dir = MakeTempDir("fdrill-audit-");
  AuditLog fine((dir / "audit.jsonl").string());
  EXPECT_TRUE(fine.Record(1, "p", "s", MakeRequest("hello", 1), "ok").ok());
  EXPECT_EQ(fine.error(), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill
