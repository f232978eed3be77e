// Real-cluster fabrics (hosts file, Slurm allocation) and how their job
// starts (workload.command / output / launcher): what loads, and each
// refusal with its place.
#include <stdlib.h>

#include <gtest/gtest.h>

#include "harness/controller/cluster_launch.h"
#include "harness/scenario/scenario.h"
#include "tests/fakes/fake_host.h"
#include "tests/scenario/scenario_text.h"

namespace fdrill {
namespace {

using scenario_test::ErrorOf;
using scenario_test::Load;
using scenario_test::Replace;

// Line 3 is the fabric, line 4 the workload.
constexpr char kSlurm[] = R"(name: s
fabric:
  slurm: true
workload: {size: 64M, ranks_per_node: 8}
targets:
  any: {nodes: all, random: {count: 1, seed: 3}, interface: ib0}
phases:
  - name: baseline
    duration: 5s
  - name: hit
    duration: 12s
    faults:
      - kind: link_rate
        target: any
        params: {rate: 100mbit}
  - name: recovery
    duration: 5s
)";

class SlurmEnv : public ::testing::Test {
 protected:
  void SetUp() override { setenv("SLURM_JOB_NODELIST", "gpu[01-03,07]", 1); }
  void TearDown() override { unsetenv("SLURM_JOB_NODELIST"); }
};

TEST_F(SlurmEnv, TheAllocationIsTheInventory) {
  Scenario s = Load(kSlurm);
  EXPECT_FALSE(s.Emulated());
  EXPECT_EQ(s.NodeNames(), (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "gpu07"}));
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.FabricName(), "Slurm allocation gpu[01-03,07]");
  EXPECT_EQ(s.agent_port, 7100);
  ASSERT_EQ(s.phases[1].faults.size(), 1u);  // nodes: all, then one seeded pick
  EXPECT_EQ(s.workload.launcher, "mpirun");
  EXPECT_EQ(s.workload.output, "fdrill");
}

TEST_F(SlurmEnv, RefusesWithoutAnAllocation) {
  unsetenv("SLURM_JOB_NODELIST");
  std::string e = ErrorOf(kSlurm);
  EXPECT_EQ(
      e.rfind(
          "drill.yaml:3:10: fabric.slurm: SLURM_JOB_NODELIST is not set: run inside an allocation",
          0),
      0u)
      << e;
  setenv("SLURM_JOB_NODELIST", "gpu[3-1]", 1);
  e = ErrorOf(kSlurm);
  EXPECT_EQ(e,
            "drill.yaml:3:10: SLURM_JOB_NODELIST=gpu[3-1]: gpu[3-1]: range 3-1 runs backwards "
            "(character 5)");
  setenv("SLURM_JOB_NODELIST", "gpu01", 1);
  e = ErrorOf(kSlurm);
  EXPECT_EQ(e, "drill.yaml:3:10: the Slurm allocation gpu01 has fewer than 2 nodes");
}

TEST_F(SlurmEnv, OneFabricKindAndAPort) {
  std::string e =
      ErrorOf(Replace(kSlurm, "  slurm: true", "  slurm: true\n  emulated: {nodes: 2}"));
  EXPECT_EQ(e, "drill.yaml:3:3: fabric is one of emulated: {nodes: N}, hosts: FILE or slurm: true");
  EXPECT_EQ(Load(Replace(kSlurm, "  slurm: true", "  slurm: true\n  agent_port: 7200")).agent_port,
            7200);
  e = ErrorOf(Replace(kSlurm, "  slurm: true", "  slurm: true\n  agent_port: 70000"));
  EXPECT_EQ(e, "drill.yaml:4:15: fabric.agent_port 70000 is out of range: accepted 1..65535");
  e = ErrorOf(Replace(kSlurm, "  slurm: true", "  emulated: {nodes: 4}\n  agent_port: 7200"));
  EXPECT_EQ(e.rfind("drill.yaml:4:15: fabric.agent_port is for hosts and slurm fabrics", 0), 0u)
      << e;
  e = ErrorOf(Replace(kSlurm, "slurm: true", "slurm: yes please"));
  EXPECT_EQ(e, "drill.yaml:3:10: fabric.slurm must be true or false");
}

TEST_F(SlurmEnv, NcclTestsAsTheWorkload) {
  Scenario s = Load(Replace(
      kSlurm, "workload: {size: 64M, ranks_per_node: 8}",
      "workload: {ranks_per_node: 8, launcher: srun, launcher_args: [--mpi=pmix],\n"
      "           command: [/opt/nccl-tests/build/all_reduce_perf, -b, 1G, -e, 1G, -N, '0']}"));
  EXPECT_TRUE(s.workload.External());
  EXPECT_EQ(s.workload.output, "nccl-tests");  // a *_perf binary
  EXPECT_EQ(ClusterLaunchArgv(s, s.workload.command, "/runs/x/hostfile"),
            (std::vector<std::string>{
                "srun", "--nodes=4", "--ntasks-per-node=8", "--nodelist=gpu[01-03,07]",
                "--kill-on-bad-exit=1", "--unbuffered", "--mpi=pmix", "stdbuf", "-oL",
                "/opt/nccl-tests/build/all_reduce_perf", "-b", "1G", "-e", "1G", "-N", "0"}));
  Scenario other = Load(Replace(kSlurm, "workload: {size: 64M, ranks_per_node: 8}",
                                "workload: {command: [python3, train.py], launcher: none}"));
  EXPECT_EQ(other.workload.output, "none");
  EXPECT_EQ(ClusterLaunchArgv(other, other.workload.command, "h"),
            (std::vector<std::string>{"python3", "train.py"}));
}

TEST_F(SlurmEnv, MpirunReadsTheRunsHostfile) {
  Scenario s = Load(Replace(
      kSlurm, "workload: {size: 64M, ranks_per_node: 8}",
      "workload: {ranks_per_node: 2, rsh_agent: rsh, command: [all_gather_perf, -b, 8M, -e, 8M]}"));
  EXPECT_EQ(ClusterHostfile(s), "gpu01 slots=2\ngpu02 slots=2\ngpu03 slots=2\ngpu07 slots=2\n");
  EXPECT_EQ(ClusterLaunchArgv(s, s.workload.command, "/runs/x/hostfile"),
            (std::vector<std::string>{"mpirun", "--hostfile", "/runs/x/hostfile", "-np", "8",
                                      "--map-by", "ppr:2:node", "--mca", "plm_rsh_agent", "rsh",
                                      "stdbuf", "-oL", "all_gather_perf", "-b", "8M", "-e", "8M"}));
}

TEST_F(SlurmEnv, RefusesLaunchesThatCannotWork) {
  auto with = [](const std::string& workload) {
    return ErrorOf(Replace(kSlurm, "workload: {size: 64M, ranks_per_node: 8}", workload));
  };
  EXPECT_EQ(with("workload: {command: all_reduce_perf}"),
            "drill.yaml:4:21: workload.command must be a list of words, like [all_reduce_perf, -b, "
            "1G, -e, 1G, -N, 0]");
  EXPECT_EQ(with("workload: {launcher: mpiexec}"),
            "drill.yaml:4:22: workload.launcher \"mpiexec\" is not one of mpirun, none, srun");
  EXPECT_EQ(with("workload: {launcher: none}"),
            "drill.yaml:4:22: workload.launcher none runs a command that starts itself; it needs "
            "workload.command");
  EXPECT_EQ(with("workload: {launcher: srun, rsh_agent: ssh, command: [x_perf]}"),
            "drill.yaml:4:39: workload.rsh_agent is mpirun's (plm_rsh_agent); launcher is srun");
  EXPECT_EQ(with("workload: {output: nccl-tests}"),
            "drill.yaml:4:20: workload.output describes a command of your own; without command "
            "the workload is fdrill-collective");
  EXPECT_EQ(with("workload: {command: [x], output: json}"),
            "drill.yaml:4:34: workload.output \"json\" is not one of nccl-tests, none");
  EXPECT_EQ(with("workload: {mode: train, steps: 100, checkpoint_every: 10, command: [x]}"),
            "drill.yaml:4:18: workload.mode: train runs fdrill-collective (its digest is checked); "
            "drop command or mode");
}

TEST_F(SlurmEnv, OutputNoneMeasuresNoIterations) {
  const std::string none = Replace(kSlurm, "workload: {size: 64M, ranks_per_node: 8}",
                                   "workload: {command: [python3, train.py]}");
  Load(none);  // exit and time only: fine
  EXPECT_EQ(
      ErrorOf(Replace(none, "  - name: recovery\n    duration: 5s",
                      "  - name: recovery\n    until: stable\n    duration: 5s\n    timeout: 60s")),
      "drill.yaml:4:21: workload.output none: the drill sees no iterations of this command, so "
      "phase recovery's "
      "until: stable can never be measured; use output: nccl-tests (a *_perf binary) or drop it");
  EXPECT_NE(ErrorOf(none + "expect: {max_slowdown: 2}\n")
                .find("so expect's max_slowdown and max_time_to_recover can never"),
            std::string::npos);
}

TEST(ClusterFabric, ALaunchOfItsOwnIsForRealClusters) {
  constexpr char kEmulated[] = R"(name: s
fabric: {emulated: {nodes: 2}}
workload: {command: [all_reduce_perf], launcher: none}
phases:
  - {name: baseline, duration: 5s}
)";
  EXPECT_EQ(ErrorOf(kEmulated).rfind("drill.yaml:3:50: workload.launcher is for a real cluster", 0),
            0u)
      << ErrorOf(kEmulated);
  std::string srun = Replace(Replace(kEmulated, "emulated: {nodes: 2}", "hosts: /dev/null"),
                             "command: [all_reduce_perf], launcher: none", "launcher: srun");
  EXPECT_NE(ErrorOf(srun).find("hosts file /dev/null"), std::string::npos) << ErrorOf(srun);
}

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

// mpirun's rsh agent is tried on every host before anything is touched:
// `<rsh_agent words> HOST true`; the hosts that refuse are named with what
// the agent said.
TEST_F(SlurmEnv, AnRshAgentThatCannotReachAHostIsRefusedBeforeTheDrill) {
  Scenario s = Load(scenario_test::Replace(kSlurm, "workload: {size: 64M, ranks_per_node: 8}",
                                           "workload: {rsh_agent: ssh -F /etc/fab/ssh.conf}"));
  FakeProcessRunner runner;
  runner.On({"ssh", "-F", "/etc/fab/ssh.conf", "gpu03", "true"},
            ProcessResult{255, "", "ssh: connect to host gpu03 port 22: Connection refused\n"});
  Status st = CheckRshReachesEveryHost(s, runner, std::chrono::seconds(5));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(),
            "drill.yaml: workload.launcher mpirun starts its daemons with `ssh -F "
            "/etc/fab/ssh.conf HOST ...`, and 1 of 4 hosts refused `ssh -F /etc/fab/ssh.conf HOST "
            "true`:\n  gpu03: ssh: connect to host gpu03 port 22: Connection refused\nmake `ssh "
            "-F /etc/fab/ssh.conf HOST true` work without a password or prompt for every host "
            "(keys, known_hosts), or set workload.rsh_agent; nothing was applied");
  EXPECT_EQ(runner.CallsStartingWith({"ssh"}).size(), 4u);
  // Every host answers: Ok. Another launcher: nothing is tried.
  FakeProcessRunner all_good;
  EXPECT_TRUE(CheckRshReachesEveryHost(s, all_good, std::chrono::seconds(5)).ok());
  Scenario srun = Load(scenario_test::Replace(kSlurm, "workload: {size: 64M, ranks_per_node: 8}",
                                              "workload: {launcher: srun}"));
  FakeProcessRunner untouched;
  EXPECT_TRUE(CheckRshReachesEveryHost(srun, untouched, std::chrono::seconds(5)).ok());
  EXPECT_TRUE(untouched.calls().empty());
}

}  // namespace
}  // namespace fdrill
