// `fdrill nccl-tests FILE` on saved real outputs: one metrics record per
// row and placement, the op from --op or the output, failures exit 1.
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/host/real_process_runner.h"

namespace fdrill {
namespace {

ProcessResult Fdrill(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {FDRILL_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  RealProcessRunner runner;
  auto r = runner.Run(argv, std::chrono::seconds(30));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ProcessResult{};
}

std::vector<nlohmann::json> Lines(const std::string& out) {
  std::vector<nlohmann::json> v;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) v.push_back(nlohmann::json::parse(line));
  return v;
}

const std::string kData = FDRILL_NCCL_TESTS_DATA;

TEST(NcclTestsCommand, TextTableBecomesMetricsRecords) {
  auto r =
      Fdrill({"nccl-tests", kData + "/a3mega_h100_all_reduce_16ranks.txt", "--op", "all_reduce"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto recs = Lines(r.out);
  ASSERT_EQ(recs.size(), 62u);  // 31 sizes, out-of-place and in-place
  EXPECT_EQ(recs[0]["op"], "all_reduce");
  EXPECT_EQ(recs[0]["bytes"], 8);
  EXPECT_EQ(recs[0]["in_place"], false);
  EXPECT_EQ(recs[1]["in_place"], true);
  EXPECT_EQ(recs.back()["bytes"], 8589934592LL);
  EXPECT_EQ(recs.back()["source"], "nccl-tests");
  EXPECT_GT(recs.back()["busbw_gbps"].get<double>(), 100.0);
  EXPECT_NE(r.err.find("31 rows"), std::string::npos) << r.err;
}

TEST(NcclTestsCommand, JsonDocumentToo) {
  auto r = Fdrill({"nccl-tests", kData + "/synthesized_v1_all_reduce.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto recs = Lines(r.out);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0]["op"], "all_reduce");
}

TEST(NcclTestsCommand, AFailedRunExitsOneAndSaysWhere) {
  auto r = Fdrill({"nccl-tests", kData + "/issue287_rtx5090_nccl_failure.txt"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("line 10: GENOA-06: Test NCCL failure common.cu:392"), std::string::npos)
      << r.err;
  auto missing = Fdrill({"nccl-tests", "/nonexistent/out.txt"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/out.txt: cannot open it"), std::string::npos);
}

}  // namespace
}  // namespace fdrill
