// A test on an emulated fabric of its own: `fdrill fabric up ARGS` before
// it, `fdrill fabric down` after it whatever happened, and no fdrill-*
// network namespace left. Needs root (skipped, saying why, otherwise; CI
// runs as root) and refuses to start over a fabric that is already up
// rather than tear down someone's. work_ is the test's scratch directory,
// made empty and removed at the end.
//
//   void SetUp() override { BringUp("fdrill-e2e-", {"--nodes", "4"}); }
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/e2e_cli.h"
#include "tests/support/scratch_dir.h"

namespace fdrill::e2e {

class FabricTest : public ::testing::Test {
 protected:
  // A test that calls it and goes on must return when it skipped or failed
  // (IsSkipped() || HasFatalFailure()).
  void BringUp(const std::string& scratch_prefix, const std::vector<std::string>& up_args,
               int timeout_s = 60) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces (CI runs as root)";
    ASSERT_FALSE(std::filesystem::exists("/run/fdrill/fabric/fabric.json"))
        << "an emulated fabric is already up; this test will not tear down someone's fabric. "
           "Run `fdrill fabric down` first.";
    work_ = ScratchPath(scratch_prefix);
    std::filesystem::create_directories(work_);
    std::vector<std::string> args = {"fabric", "up"};
    args.insert(args.end(), up_args.begin(), up_args.end());
    auto up = Fdrill(args, timeout_s);
    ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
    up_ = true;
  }

  void TearDown() override {
    if (up_) {
      auto down = Fdrill({"fabric", "down"});
      EXPECT_EQ(down.exit_code, 0) << down.out << down.err;
      EXPECT_EQ(Sh({"ip", "netns", "list"}).find("fdrill-"), std::string::npos)
          << "namespaces left behind";
    }
    if (!work_.empty()) std::filesystem::remove_all(work_);
  }

  std::filesystem::path work_;
  bool up_ = false;
};

}  // namespace fdrill::e2e
