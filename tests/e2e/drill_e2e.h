// What the drill e2e tests share (drill_e2e_test.cc and its neighbours):
// DrillE2E, a real 4-node emulated fabric brought up before each test and
// torn down after it, also when an assertion fails (FabricTest). Needs root.
//
// FabricLinks    fab0's root qdisc and admin state on every node, to prove
//                nothing was left touched.
// WriteScenario  scenarios/quickstart.yaml with FROM replaced by TO, in the
//                test's scratch directory.
// RunDrill       `fdrill run scenarios/NAME.yaml --out OUT`, optionally at a
//                time scale.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/e2e_cli.h"
#include "tests/support/fabric_test.h"

namespace fdrill::e2e {

class DrillE2E : public FabricTest {
 protected:
  void SetUp() override { BringUp("fdrill-e2e-", {"--nodes", "4"}); }

  // Root qdisc kind and admin state of fab0 on every node, to prove nothing
  // was touched.
  std::string FabricLinks() {
    std::string out;
    for (int i = 0; i < 4; ++i) {
      std::string ns = Netns("n" + std::to_string(i));
      out += Sh({"ip", "netns", "exec", ns, "tc", "qdisc", "show", "dev", "fab0", "root"});
      out += Sh({"ip", "-n", ns, "-br", "link", "show", "fab0"});
    }
    return out;
  }

  std::filesystem::path WriteScenario(const std::string& name, const std::string& from,
                                      const std::string& to) {
    std::ifstream in(std::string(FDRILL_SOURCE_DIR) + "/scenarios/quickstart.yaml");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    auto at = text.find(from);
    EXPECT_NE(at, std::string::npos);
    text.replace(at, from.size(), to);
    std::filesystem::path p = work_ / name;
    std::ofstream(p) << text;
    return p;
  }

  // `fdrill run scenarios/NAME.yaml --out OUT`.
  // scenarios/NAME.yaml into OUT; with TIME_SCALE its windows scaled
  // (fdrill run --time-scale), where the test's assertions hold at it.
  static ProcessResult RunDrill(const std::string& name, const std::filesystem::path& out,
                                int timeout_s, const std::string& time_scale = "1") {
    return Fdrill({"run", std::string(FDRILL_SOURCE_DIR) + "/scenarios/" + name + ".yaml", "--out",
                   out.string(), "--time-scale", time_scale},
                  timeout_s);
  }
};

}  // namespace fdrill::e2e
