// What the controller's component tests share: a drill's context around
// fake agents (tests/fakes/fake_agent_calls.h), its events recorded into a
// scratch run directory, and that directory's events read back.
//   class MyTest : public controller_test::DrillFixture {
//    protected:
//     MyTest() : DrillFixture("fdrill-mine-", {"n0", "n1"}) {}
//   };
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/controller/drill.h"
#include "harness/controller/drill_context.h"
#include "harness/controller/recorder.h"
#include "tests/fakes/fake_agent_calls.h"
#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"

namespace fdrill::controller_test {

class DrillFixture : public ::testing::Test {
 protected:
  DrillFixture(std::string scratch_prefix, std::vector<std::string> agents)
      : scratch_prefix_(std::move(scratch_prefix)), agents_(std::move(agents)) {}

  void SetUp() override {
    dir_ = MakeTempDir(scratch_prefix_);
    ASSERT_FALSE(dir_.empty());
    auto rec = RunRecorder::Create(dir_ + "/run", clock_);
    ASSERT_TRUE(rec.ok()) << rec.status().message();
    rec_ = std::move(rec).value();
    events_.Attach(rec_.get());
  }
  void TearDown() override {
    events_.Attach(nullptr);
    rec_.reset();
    std::filesystem::remove_all(dir_);
  }

  // events.jsonl so far, in order.
  std::vector<Json> Events() const { return ReadJsonLines(dir_ + "/run/events.jsonl"); }

  const std::string scratch_prefix_;
  std::string dir_;
  RealClock clock_;
  Scenario s_;
  DrillOptions opt_;
  DrillState state_;
  DrillEvents events_;
  std::unique_ptr<RunRecorder> rec_;
  FakeAgentCalls agents_;
  DrillTargets targets_;  // none unless a test resolves some
  DrillContext ctx_{s_, opt_, clock_, state_, agents_, events_, targets_};
  std::vector<std::unique_ptr<WorkloadSupervisor>> workloads_;
};

}  // namespace fdrill::controller_test
