// Issue 50: a command of the operator's own as the workload — its step
// lines (metrics:), framework, restart policy and digest — on the emulated
// fabric and a real one; every mistake refused with file, line and column.
#include <cstdlib>

#include <gtest/gtest.h>

#include "harness/scenario/scenario.h"
#include "tests/scenario/scenario_text.h"

namespace fdrill {
namespace {

using scenario_test::ErrorOf;
using scenario_test::Load;
using scenario_test::Replace;

constexpr char kJob[] = R"(name: s
fabric: {emulated: {nodes: 2}}
workload:
  command: [/usr/bin/python3, "{scenario_dir}/train.py", --ckpt, "{checkpoint_dir}"]
  framework: pytorch
  metrics: megatron
  checkpoint_every: 10
  restart: {max_restarts: 1, hang_timeout: 5s}
phases:
  - {name: baseline, duration: 5s}
expect: {digest: equal}
)";

TEST(JobWorkload, ALineUpIsFdrillCollectivesNotACommands) {
  std::string e =
      ErrorOf(Replace(kJob, "framework: pytorch", "framework: pytorch\n  lineup: none"));
  EXPECT_NE(e.find("drill.yaml:6:11: workload.lineup frames fdrill-collective's iterations"),
            std::string::npos)
      << e;
}

TEST(JobWorkload, ACommandRunsOnTheEmulatedFabricWithItsStepLinesAndRestartPolicy) {
  const Scenario s = Load(kJob);
  const WorkloadSpec& w = s.workload;
  ASSERT_EQ(w.command.size(), 4u);
  // {scenario_dir}: the file's directory, absolute ("drill.yaml" is read from ".").
  EXPECT_EQ(w.command[1].front(), '/');
  EXPECT_EQ(w.command[1].substr(w.command[1].size() - 9), "/train.py");
  EXPECT_EQ(w.command[1].find("{scenario_dir}"), std::string::npos);
  EXPECT_EQ(w.command[3], "{checkpoint_dir}");  // the supervisor's to expand
  EXPECT_EQ(w.output, "steps");
  EXPECT_TRUE(w.Steps());
  EXPECT_TRUE(w.WrapsRanks());
  EXPECT_EQ(w.metrics_preset, "megatron");
  EXPECT_EQ(w.framework, "pytorch");
  EXPECT_EQ(w.checkpoint_every, 10);
  EXPECT_EQ(w.restart.max_restarts, 1);
  EXPECT_TRUE(s.expect.digest_equal);

  const Scenario p =
      Load(Replace(kJob, "metrics: megatron",
                   R"(metrics: {pattern: 'step (?<step>\d+) took (?<time_ms>[0-9.]+)'})"));
  EXPECT_TRUE(p.workload.metrics_preset.empty());
  // metrics: file — the job writes its own records to $FDRILL_METRICS.
  const Scenario f = Load(Replace(kJob, "metrics: megatron", "metrics: file"));
  EXPECT_TRUE(f.workload.metrics_file);
  EXPECT_TRUE(f.workload.Steps());
  EXPECT_EQ(p.workload.metrics_pattern, R"(step (?<step>\d+) took (?<time_ms>[0-9.]+))");
}

TEST(JobWorkload, MetricsThatCannotBeReadAreRefusedWithWhatWouldBeRight) {
  EXPECT_EQ(ErrorOf(Replace(kJob, "metrics: megatron", "metrics: megatorn")),
            "drill.yaml:6:12: workload.metrics: unknown preset \"megatorn\"; did you mean "
            "\"megatron\"? (presets: deepspeed, deepspeed-pipe, hf-trainer, lightning, megatron, "
            "torchtitan)");
  const std::string no_step =
      ErrorOf(Replace(kJob, "metrics: megatron", "metrics: {pattern: 'took (?<time_ms>[0-9.]+)'}"));
  EXPECT_EQ(no_step.rfind("drill.yaml:6:22: workload.metrics: ", 0), 0u) << no_step;
  EXPECT_NE(no_step.find("step"), std::string::npos) << no_step;
  const std::string bad_regex =
      ErrorOf(Replace(kJob, "metrics: megatron", "metrics: {pattern: '(?<step>\\d+'}"));
  EXPECT_EQ(bad_regex.rfind("drill.yaml:6:22: workload.metrics: ", 0), 0u) << bad_regex;
  EXPECT_EQ(ErrorOf(Replace(kJob, "metrics: megatron", "metrics: {preset: megatron, pattern: x}")),
            "drill.yaml:6:12: workload.metrics takes one of preset: (deepspeed, deepspeed-pipe, "
            "hf-trainer, lightning, megatron, torchtitan) or pattern: (a regular expression with a "
            "(?<step>...) group)");
  EXPECT_EQ(ErrorOf(Replace(kJob, "metrics: megatron", "metrics: megatron\n  output: none")),
            "drill.yaml:7:11: workload.output and workload.metrics both say how the command's "
            "output is read; metrics: reads its step lines, so drop output");
}

// A framework that is not bitwise deterministic compares a number it prints
// within a stated relative tolerance.
TEST(JobWorkload, ADigestWithAToleranceNamesTheNumberAndHowCloseItMustBe) {
  const Scenario s =
      Load(Replace(kJob, "{digest: equal}", "{digest: {key: param_norm, tolerance: 1e-6}}"));
  EXPECT_TRUE(s.expect.digest_equal);
  EXPECT_EQ(s.expect.digest_key, "param_norm");
  ASSERT_TRUE(s.expect.digest_tolerance.has_value());
  EXPECT_DOUBLE_EQ(*s.expect.digest_tolerance, 1e-6);
  EXPECT_FALSE(Load(kJob).expect.digest_tolerance.has_value());
  EXPECT_EQ(Load(kJob).expect.digest_key, "digest");

  EXPECT_EQ(ErrorOf(Replace(kJob, "{digest: equal}", "{digest: {key: param_norm}}")),
            "drill.yaml:11:18: expect.digest needs both key (the name of the job's last \"KEY: "
            "NUMBER\" line, like param_norm) and tolerance (the relative difference allowed, "
            "like 1e-6)");
  EXPECT_EQ(ErrorOf(Replace(kJob, "{digest: equal}", "{digest: {key: norm, tolerance: 2}}")),
            "drill.yaml:11:41: expect.digest.tolerance must be a relative difference from 0 to "
            "below 1 (like 1e-6)");
  EXPECT_EQ(ErrorOf(Replace(kJob, "{digest: equal}", "{digest: {key: 'a b', tolerance: 0}}")),
            "drill.yaml:11:24: expect.digest.key \"a b\" is not a name the job could print as "
            "\"KEY: NUMBER\" (letters, digits, _ . -)");
  EXPECT_EQ(ErrorOf(Replace(kJob, "{digest: equal}", "{digest: {key: n, tolerance: 0, by: x}}"))
                .rfind("drill.yaml:11:", 0),
            0u);
}

TEST(JobWorkload, KeysThatNeedACommandOrAnotherFabricAreRefused) {
  EXPECT_EQ(ErrorOf(Replace(kJob, "framework: pytorch", "framework: jax"))
                .rfind("drill.yaml:5:14: workload.framework \"jax\" is not one of pytorch", 0),
            0u);
  // Without a command: fdrill-collective, whose records are its own.
  const std::string collective = R"(name: s
fabric: {emulated: {nodes: 2}}
workload: {metrics: megatron}
phases:
  - {name: baseline, duration: 5s}
)";
  EXPECT_EQ(ErrorOf(collective),
            "drill.yaml:3:21: workload.metrics describes a command of your own; without "
            "command the workload is fdrill-collective");
  EXPECT_EQ(ErrorOf(Replace(kJob, "  checkpoint_every: 10\n", "  steps: 100\n")),
            "drill.yaml:7:10: workload.steps is mode: train's; a command runs as many steps as "
            "its own arguments say");
  // The digest is rerun on loopback: a framework: pytorch job only.
  EXPECT_EQ(ErrorOf(Replace(kJob, "  framework: pytorch\n", ""))
                .rfind("drill.yaml:10:18: expect.digest reruns a framework: pytorch command", 0),
            0u)
      << ErrorOf(Replace(kJob, "  framework: pytorch\n", ""));
  EXPECT_EQ(ErrorOf(Replace(kJob, "{digest: equal}", "{digest: same}")),
            "drill.yaml:11:18: expect.digest must be equal (the job's final \"digest: HEX\" "
            "line, bitwise, against its fault-free run's) or {key: K, tolerance: T} (a number "
            "the job prints, within a relative difference)");
  // A real cluster's /tmp is not shared: {checkpoint_dir} is the emulated fabric's.
  setenv("SLURM_JOB_NODELIST", "gpu[01-02]", 1);
  const std::string hosts = Replace(Replace(kJob, "emulated: {nodes: 2}", "slurm: true"),
                                    "expect: {digest: equal}\n", "");
  EXPECT_NE(ErrorOf(hosts).find("{checkpoint_dir} is a directory every node shares on the "
                                "emulated fabric only"),
            std::string::npos)
      << ErrorOf(hosts);
  // torchrun (launcher: none) sets the rank variables itself; its step
  // lines are read from its output, but framework needs job-rank per rank.
  const std::string torchrun = Replace(
      Replace(Replace(kJob, "emulated: {nodes: 2}", "slurm: true"), "expect: {digest: equal}\n",
              ""),
      R"(command: [/usr/bin/python3, "{scenario_dir}/train.py", --ckpt, "{checkpoint_dir}"])",
      "command: [torchrun, --nproc-per-node, \"8\", train.py]\n  launcher: none");
  EXPECT_EQ(ErrorOf(torchrun).rfind("drill.yaml:5:13: workload.launcher none: framework and "
                                    "metrics: file need each rank under fdrill job-rank",
                                    0),
            0u)
      << ErrorOf(torchrun);
  const Scenario t = Load(Replace(torchrun, "  framework: pytorch\n", ""));
  EXPECT_TRUE(t.workload.Steps());
  EXPECT_FALSE(t.workload.WrapsRanks());
  unsetenv("SLURM_JOB_NODELIST");
}

}  // namespace
}  // namespace fdrill
