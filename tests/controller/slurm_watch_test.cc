// SlurmWatch against a recording runner that plays sinfo and squeue: each
// change is reported once, the first sample too; a failed sinfo is said
// once; a job squeue no longer knows has ended.
#include "harness/controller/slurm_watch.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

using Argv = std::vector<std::string>;

TEST(SlurmWatch, ParsesSinfosNodeStateAndReason) {
  const auto states = ParseSinfoStates("n0|idle|none\nn1|down*|Not responding\ngarbage\n");
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[1].node, "n1");
  EXPECT_EQ(states[1].state, "down*");
  EXPECT_EQ(states[1].reason, "Not responding");
}

TEST(SlurmWatch, ReportsEachChangeOnceAndTheJobsEnd) {
  FakeProcessRunner runner;
  const Argv sinfo = {"sinfo", "--noheader", "--Node", "--nodes", "n[0-1]", "--format", "%N|%T|%E"};
  runner.On(sinfo, ProcessResult{0, "n0|allocated|none\nn1|allocated|none\n", ""}, 2);
  runner.On(sinfo, ProcessResult{1, "", "slurm_load_node: Unable to contact slurm controller\n"},
            2);
  runner.On(sinfo, ProcessResult{0, "n0|allocated|none\nn1|down*|Not responding\n", ""});
  const Argv squeue = {"squeue", "--noheader", "--jobs", "7", "--format", "%T"};
  runner.On(squeue, ProcessResult{0, "RUNNING\n", ""}, 3);
  runner.On(squeue, ProcessResult{1, "", "slurm_load_jobs error: Invalid job id specified\n"});
  std::vector<std::string> said;
  SlurmWatch watch(
      runner, "n[0-1]", "7",
      [&](const SlurmNodeState& n) { said.push_back(n.node + " " + n.state + " " + n.reason); },
      [&](const std::string& job, const std::string& state) {
        said.push_back("job " + job + " " + state);
      });
  for (int i = 0; i < 5; ++i) watch.SampleOnce();
  EXPECT_EQ(said, (std::vector<std::string>{
                      "n0 allocated none", "n1 allocated none", "job 7 RUNNING",
                      "* no answer slurm_load_node: Unable to contact slurm controller",
                      "job 7 ended", "n1 down* Not responding"}));
}

}  // namespace
}  // namespace fdrill
