// `fdrill compare A B` through its CLI glue (harness/cli/cmd_compare.cc):
// flags, stdout, --json / --html / --junit and the exit codes 0 / 1 / 2.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/reports/synthetic_run.h"

namespace fdrill {
void AddCompareCommands(CLI::App& app, int* exit_code);  // harness/cli/commands.h

namespace {

using reports_test::ReadText;
using reports_test::SyntheticRun;
using reports_test::TempDir;

// Runs `fdrill ARGS...` with only the compare command; returns the exit code
// and leaves stdout in *out.
int Fdrill(std::vector<std::string> args, std::string* out) {
  CLI::App app{"fdrill"};
  app.require_subcommand(1);
  int exit_code = -1;
  AddCompareCommands(app, &exit_code);
  std::vector<const char*> argv = {"fdrill"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  testing::internal::CaptureStdout();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    exit_code = 2;
  }
  *out = testing::internal::GetCapturedStdout();
  return exit_code;
}

class CompareCli : public testing::Test {
 protected:
  void SetUp() override {
    SyntheticRun a = SyntheticRun::Standard();
    a.seed = 1;
    a.WriteTo(a_.path());
    SyntheticRun b = SyntheticRun::Standard();
    b.seed = 2;
    b.speed = 0.95;
    b.WriteTo(b_.path());
  }
  std::string A() const { return a_.path().string(); }
  std::string B() const { return b_.path().string(); }
  TempDir a_, b_, out_;
};

TEST_F(CompareCli, ARegressionExitsOneAndWritesJsonHtmlAndJunit) {
  std::string out;
  const std::string json_path = (out_.path() / "cmp.json").string();
  const std::string html_path = (out_.path() / "cmp.html").string();
  const std::string junit_path = (out_.path() / "cmp.xml").string();
  EXPECT_EQ(Fdrill({"compare", A(), B(), "--run-spread", "0.5%", "--json", json_path, "--html",
                    html_path, "--junit", junit_path},
                   &out),
            1);
  EXPECT_TRUE(out.starts_with("# fdrill compare — regression")) << out;
  nlohmann::json j = nlohmann::json::parse(ReadText(json_path));
  EXPECT_EQ(j["verdict"], "regression");
  EXPECT_EQ(j["a"]["dir"], A());
  EXPECT_NE(ReadText(html_path).find("<h1>fdrill compare — regression</h1>"), std::string::npos);
  EXPECT_NE(ReadText(junit_path).find("<failure message=\"regression\">"), std::string::npos);
}

TEST_F(CompareCli, AWiderThresholdOrTheSameRunExitsZero) {
  std::string out;
  EXPECT_EQ(Fdrill({"compare", A(), B(), "--threshold", "10%", "--time-threshold", "50%",
                    "--run-spread", "0.5%"},
                   &out),
            0);
  EXPECT_NE(
      out.find("Thresholds: busbw 10 %, a fault's slowdown, times, stall and GPU·s lost 50 %"),
      std::string::npos)
      << out;
  EXPECT_EQ(Fdrill({"compare", A(), A(), "--run-spread", "0.5%"}, &out), 0);
  EXPECT_TRUE(out.starts_with("# fdrill compare — no change")) << out;
  // One run a side without a run spread decides nothing: exit 2.
  EXPECT_EQ(Fdrill({"compare", A(), B()}, &out), 2);
  EXPECT_TRUE(out.starts_with("# fdrill compare — not enough runs")) << out;
}

TEST_F(CompareCli, UnreadableInputOrBadFlagsExitTwo) {
  std::string out;
  EXPECT_EQ(Fdrill({"compare", A(), (out_.path() / "absent").string()}, &out), 2);
  EXPECT_EQ(Fdrill({"compare", A(), B(), "--threshold", "fast"}, &out), 2);
  EXPECT_EQ(Fdrill({"compare", A(), B(), "--time-threshold", "150%"}, &out), 2);
  EXPECT_EQ(Fdrill({"compare", A(), B(), "--run-spread", "0%"}, &out), 2);
  EXPECT_EQ(
      Fdrill({"compare", A(), B(), "--json", (out_.path() / "no/such/dir.json").string()}, &out),
      2);
}

}  // namespace
}  // namespace fdrill
