#include "common/core/status.h"

#include <gtest/gtest.h>

#include "common/core/result.h"
#include "common/host/real_process_runner.h"

namespace fdrill {
namespace {

TEST(Status, AnnotatePrefixesContextAndKeepsCode) {
  Status s = NotFound("no such device fab9").Annotate("link_rate").Annotate("n1");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "n1: link_rate: no such device fab9");
  EXPECT_TRUE(Status::Ok().Annotate("ctx").ok());
  EXPECT_EQ(StatusCodeFromName(StatusCodeName(StatusCode::kUnsupported)), StatusCode::kUnsupported);
}

TEST(Result, CarriesValueOrError) {
  Result<int> good = 3;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  Result<int> bad = InvalidArgument("nope");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(RealProcessRunner, CapturesOutputExitCodeAndTimeout) {
  RealProcessRunner runner;
  auto r = runner.Run({"sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(5));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  auto slow = runner.Run({"sleep", "5"}, std::chrono::milliseconds(100));
  EXPECT_EQ(slow.status().code(), StatusCode::kDeadlineExceeded);
  auto missing = runner.Run({"/nonexistent/fdrill-tool"}, std::chrono::seconds(1));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotInstalled);
  auto checked = RunChecked(runner, {"sh", "-c", "echo boom >&2; exit 1"});
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.status().message().find("boom"), std::string::npos);
}

}  // namespace
}  // namespace fdrill
