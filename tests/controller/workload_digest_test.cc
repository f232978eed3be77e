// WorkloadSupervisor's end-of-run checks of what the job computed, with a
// recording ProcessRunner (tests/fakes/fake_host.h) in place of
// fdrill-train-ref and the fault-free mpirun: mode: train's final digest
// against the reference's (agreeing, differing, missing, the reference
// failing), and expect.digest's rerun on loopback — its command line, the
// digest or a number within a tolerance, and a job that printed none. The
// job's log tail comes as its agent reports the exit.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/controller/workload_supervisor.h"
#include "tests/controller/drill_fixture.h"
#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

class WorkloadDigestTest : public controller_test::DrillFixture {
 protected:
  WorkloadDigestTest() : DrillFixture("fdrill-digest-", {"n0", "n1"}) {}
  void SetUp() override {
    DrillFixture::SetUp();
    opt_.bin_dir = "/opt/fdrill/bin";
  }
  // The scenario's supervisor, its job ended with LOG_TAIL.
  WorkloadSupervisor& Ended(const std::string& yaml, const std::string& log_tail) {
    auto s = ParseScenario(yaml, "drill.yaml");
    EXPECT_TRUE(s.ok()) << s.status().message();
    s_ = s.ok() ? std::move(s).value() : Scenario{};
    workloads_.clear();
    workloads_.push_back(std::make_unique<WorkloadSupervisor>(ctx_, s_.Workloads()[0], 0, runner_));
    workloads_.front()->OnExit("n0", 0, log_tail);
    return *workloads_.front();
  }
  // The first event of TYPE; null when none.
  Json EventOf(const std::string& type) const {
    for (const Json& e : Events()) {
      if (e.value("type", "") == type) return e;
    }
    return nullptr;
  }

  FakeProcessRunner runner_;
};

constexpr char kTrain[] = R"(name: t
fabric: {emulated: {nodes: 2}}
workload: {mode: train, steps: 40, checkpoint_every: 10, size: 4K}
phases:
  - {name: baseline, duration: 1s}
  - {name: end, duration: 1s}
)";

// The job's last digest and step count against fdrill-train-ref's for as
// many ranks, steps and bytes: they agree.
TEST_F(WorkloadDigestTest, ATrainedJobsDigestIsCheckedAgainstTheReference) {
  runner_.OnOutput({"/opt/fdrill/bin/fdrill-train-ref"}, "digest: 0123456789abcdef\n");
  Ended(kTrain, "steps_done: 30\ndigest: ffff\nsteps_done: 40\ndigest: 0123456789abcdef\n")
      .CheckDigest();
  ASSERT_EQ(runner_.calls().size(), 1u);
  EXPECT_EQ(runner_.calls()[0],
            (std::vector<std::string>{"/opt/fdrill/bin/fdrill-train-ref", "--nranks", "2",
                                      "--steps", "40", "-b", "4096"}));
  const Json check = EventOf("digest_check");
  ASSERT_TRUE(check.is_object());
  EXPECT_EQ(check["steps"], 40);
  EXPECT_EQ(check["digest"], "0123456789abcdef");
  EXPECT_EQ(check["intact"], true);
}

TEST_F(WorkloadDigestTest, ADigestThatDiffersIsNotIntact) {
  runner_.OnOutput({"/opt/fdrill/bin/fdrill-train-ref"}, "digest: 0123456789abcdef\n");
  Ended(kTrain, "steps_done: 40\ndigest: 0123456789abcdee\n").CheckDigest();
  const Json check = EventOf("digest_check");
  EXPECT_EQ(check["expected"], "0123456789abcdef");
  EXPECT_EQ(check["intact"], false);
}

// A job that did not end cleanly printed no digest: recorded as missing,
// and the reference is not run.
TEST_F(WorkloadDigestTest, NoDigestInTheLogIsMissingAndRunsNoReference) {
  Ended(kTrain, "rank 1: killed\n").CheckDigest();
  EXPECT_TRUE(runner_.calls().empty());
  const Json check = EventOf("digest_check");
  ASSERT_TRUE(check.is_object());
  EXPECT_TRUE(check["digest"].is_null());
}

// The reference failing is the drill's error, with what it said; no
// verdict on the job's digest.
TEST_F(WorkloadDigestTest, AFailingReferenceIsAnErrorNotAVerdict) {
  runner_.OnFail({"/opt/fdrill/bin/fdrill-train-ref"}, "cannot allocate 4096 bytes");
  Ended(kTrain, "steps_done: 40\ndigest: 0123456789abcdef\n").CheckDigest();
  EXPECT_TRUE(EventOf("digest_check").is_null());
  EXPECT_EQ(EventOf("error").value("message", ""),
            "fdrill-train-ref failed: cannot allocate 4096 bytes");
}

constexpr char kJob[] = R"(name: t
fabric: {emulated: {nodes: 2}}
workload:
  command: [/usr/bin/python3, train.py, --checkpoint-dir, "{checkpoint_dir}"]
  framework: pytorch
  metrics: megatron
phases:
  - {name: baseline, duration: 1s}
  - {name: end, duration: 1s}
expect: {digest: equal}
)";

// expect.digest: the same command fault-free on loopback — mpirun with as
// many ranks on lo, each under job-rank with loopback's rendezvous and a
// checkpoint directory of its own in the run directory — and its last
// digest line against the job's; its output kept as reference.log.
TEST_F(WorkloadDigestTest, AJobsDigestIsCheckedAgainstAFaultFreeRunOnLoopback) {
  runner_.OnOutput({"mpirun"}, "step 1\ndigest: beef\n");
  Ended(kJob, "steps_done: 12\ndigest: beef\n").CheckJobDigest();
  ASSERT_EQ(runner_.calls().size(), 1u);
  const std::vector<std::string>& argv = runner_.calls()[0];
  const std::string checkpoint =
      std::filesystem::absolute(dir_ + "/run/reference/checkpoint").string();
  const std::vector<std::string> want = {"mpirun",
                                         "--allow-run-as-root",
                                         "-np",
                                         "2",
                                         "--oversubscribe",
                                         "--bind-to",
                                         "none",
                                         "--mca",
                                         "mpi_yield_when_idle",
                                         "1",
                                         "--mca",
                                         "btl",
                                         "self,vader,tcp",
                                         "--mca",
                                         "btl_tcp_if_include",
                                         "lo",
                                         "--mca",
                                         "oob_tcp_if_include",
                                         "lo",
                                         "/opt/fdrill/bin/fdrill",
                                         "job-rank",
                                         "--framework",
                                         "pytorch",
                                         "--master-addr",
                                         "127.0.0.1",
                                         "--master-port",
                                         "29501",
                                         "--socket-ifname",
                                         "lo",
                                         "--",
                                         "/usr/bin/python3",
                                         "train.py",
                                         "--checkpoint-dir",
                                         checkpoint};
  EXPECT_EQ(argv, want);
  EXPECT_TRUE(std::filesystem::is_directory(checkpoint));
  const Json check = EventOf("digest_check");
  ASSERT_TRUE(check.is_object());
  EXPECT_EQ(check["steps"], 12);
  EXPECT_EQ(check["intact"], true);
  std::ifstream in(dir_ + "/run/reference.log");
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_EQ(log.str(), "step 1\ndigest: beef\n");
}

// With a tolerance, the job's number and the rerun's may differ that much.
TEST_F(WorkloadDigestTest, ANumberWithinTheToleranceIsIntact) {
  std::string yaml = kJob;
  yaml.replace(yaml.find("{digest: equal}"), 15, "{digest: {key: param_norm, tolerance: 1e-6}}");
  runner_.OnOutput({"mpirun"}, "param_norm: 12.0000001\n");
  Ended(yaml, "param_norm: 12.0\n").CheckJobDigest();
  const Json check = EventOf("digest_check");
  ASSERT_TRUE(check.is_object());
  EXPECT_EQ(check["key"], "param_norm");
  EXPECT_EQ(check["tolerance"], 1e-6);
  EXPECT_EQ(check["intact"], true);
}

// A job that printed no digest line: missing, and an error that names the
// line it should have printed and its log; nothing is rerun.
TEST_F(WorkloadDigestTest, AJobWithoutADigestLineIsNamedAndNotRerun) {
  Ended(kJob, "Traceback (most recent call last):\n").CheckJobDigest();
  EXPECT_TRUE(runner_.calls().empty());
  EXPECT_TRUE(EventOf("digest_check")["digest"].is_null());
  EXPECT_EQ(EventOf("error").value("message", ""),
            "expect.digest: the job printed no \"digest: HEX\" line before it ended (see "
            "workload.log)");
}

// The rerun printing no digest is the drill's error, with its exit and
// what it said.
TEST_F(WorkloadDigestTest, ARerunWithoutADigestIsAnError) {
  runner_.On({"mpirun"}, ProcessResult{1, "", "ORTE was unable to start\n"});
  Ended(kJob, "digest: beef\n").CheckJobDigest();
  EXPECT_TRUE(EventOf("digest_check").is_null());
  EXPECT_EQ(EventOf("error").value("message", ""),
            "expect.digest: the fault-free run on loopback printed no digest (exit 1): ORTE was "
            "unable to start\n");
}

}  // namespace
}  // namespace fdrill
