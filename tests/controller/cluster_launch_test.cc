// cluster_launch.h's pieces the scenario tests do not reach
// (tests/scenario/cluster_fabric_test.cc holds the launchers' argv and the
// rsh check's message): the rail interfaces a framework is pinned to, a
// job's command under `fdrill job-rank` with its step lines, rendezvous and
// niceness, a launcher of its own left alone, and the rsh check's summary
// of many refusing hosts. Scenarios built in place; a recording
// ProcessRunner (tests/fakes/fake_host.h).
#include "harness/controller/cluster_launch.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

using Argv = std::vector<std::string>;

WorkloadSpec Job(Argv command) {
  WorkloadSpec w;
  w.command = std::move(command);
  return w;
}

TEST(ClusterLaunch, RailInterfacesAreTheFabricsNamesInOrder) {
  EXPECT_EQ(RailInterfaces(0), "");
  EXPECT_EQ(RailInterfaces(1), "fab0");
  EXPECT_EQ(RailInterfaces(3), "fab0,fab1,fab2");
}

// A command that needs no wrapper runs as written, its {checkpoint_dir}
// expanded wherever it appears in a word.
TEST(ClusterLaunch, ACommandWithoutStepLinesOrFrameworkRunsAsWritten) {
  const WorkloadSpec w = Job({"all_reduce_perf", "--ckpt={checkpoint_dir}/a", "{checkpoint_dir}"});
  EXPECT_EQ(JobRankArgv(w, "/opt/fdrill/bin/fdrill", {"/runs/r1/checkpoint"}),
            (Argv{"all_reduce_perf", "--ckpt=/runs/r1/checkpoint/a", "/runs/r1/checkpoint"}));
}

// Step lines by preset: each rank under job-rank, which writes them to the
// metrics template; a pattern and a file of the job's own the same way.
TEST(ClusterLaunch, StepLinesPutEachRankUnderJobRank) {
  WorkloadSpec w = Job({"python3", "train.py"});
  w.output = "steps";
  w.metrics_preset = "megatron";
  JobPlaces at;
  at.metrics_path = "/tmp/fdrill-1.{host}/rank-{rank}.jsonl";
  EXPECT_EQ(JobRankArgv(w, "/f", at),
            (Argv{"/f", "job-rank", "--jsonl", "/tmp/fdrill-1.{host}/rank-{rank}.jsonl", "--preset",
                  "megatron", "--", "python3", "train.py"}));
  w.metrics_preset.clear();
  w.metrics_pattern = R"(step (?<step>\d+))";
  w.metrics_file = true;
  EXPECT_EQ(
      JobRankArgv(w, "/f", at),
      (Argv{"/f", "job-rank", "--jsonl", "/tmp/fdrill-1.{host}/rank-{rank}.jsonl", "--from-file",
            "--pattern", R"(step (?<step>\d+))", "--", "python3", "train.py"}));
  // No metrics path (the digest's fault-free rerun): no records written.
  at.metrics_path.clear();
  EXPECT_EQ(JobRankArgv(w, "/f", at), (Argv{"/f", "job-rank", "--", "python3", "train.py"}));
}

// A framework's rendezvous: the master's address and port, the rails the
// emulated fabric pins its sockets to, and the emulated nodes' niceness.
TEST(ClusterLaunch, AFrameworkGetsItsRendezvousRailsAndNiceness) {
  WorkloadSpec w = Job({"python3", "ddp.py", "--checkpoint-dir", "{checkpoint_dir}"});
  w.framework = "pytorch";
  JobPlaces at{"/c", "", "198.18.0.1", 29500, "fab0,fab1", kEmulatedJobNice};
  EXPECT_EQ(JobRankArgv(w, "/f", at),
            (Argv{"/f", "job-rank", "--framework", "pytorch", "--master-addr", "198.18.0.1",
                  "--master-port", "29500", "--socket-ifname", "fab0,fab1", "--nice", "10", "--",
                  "python3", "ddp.py", "--checkpoint-dir", "/c"}));
  // A real cluster: the host's name, the job's own interfaces, no niceness.
  at = {"/c", "", "gpu01", 29500, "", 0};
  EXPECT_EQ(JobRankArgv(w, "/f", at),
            (Argv{"/f", "job-rank", "--framework", "pytorch", "--master-addr", "gpu01",
                  "--master-port", "29500", "--", "python3", "ddp.py", "--checkpoint-dir", "/c"}));
}

// A launcher of the job's own starts and wraps the ranks itself: its
// command is left as written even with step lines.
TEST(ClusterLaunch, ALauncherOfItsOwnIsNotWrapped) {
  WorkloadSpec w = Job({"torchrun", "--nproc-per-node=8", "train.py"});
  w.launcher = "none";
  w.output = "steps";
  w.metrics_preset = "megatron";
  JobPlaces at;
  at.metrics_path = "/tmp/m";
  EXPECT_EQ(JobRankArgv(w, "/f", at), w.command);
}

// Many hosts refusing the rsh agent: the first five named with what it
// said (its trailing newlines trimmed), then how many more; each host
// asked once.
TEST(ClusterLaunch, ManyHostsRefusingTheRshAgentAreSummarised) {
  Scenario s;
  s.file = "drill.yaml";
  s.hosts_file = "cluster.hosts";
  for (int i = 1; i <= 8; ++i) s.host_names.push_back("gpu0" + std::to_string(i));
  s.nodes = 8;
  FakeProcessRunner runner;
  for (int i = 2; i <= 8; ++i) {
    runner.On({"ssh", "gpu0" + std::to_string(i), "true"},
              ProcessResult{255, "", "Permission denied (publickey).\r\n"});
  }
  Status st = CheckRshReachesEveryHost(s, runner, std::chrono::seconds(5));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("and 7 of 8 hosts refused `ssh HOST true`:\n"
                              "  gpu02: Permission denied (publickey).\n"
                              "  gpu03: Permission denied (publickey).\n"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("  gpu06: Permission denied (publickey).\n  ... and 2 more\n"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(st.message().find("gpu07:"), std::string::npos);
  EXPECT_EQ(runner.calls().size(), 8u);
}

// A host whose agent exits non-zero without a word is named by its exit.
TEST(ClusterLaunch, ASilentRefusalIsNamedByItsExit) {
  Scenario s;
  s.file = "drill.yaml";
  s.hosts_file = "cluster.hosts";
  s.host_names = {"gpu01"};
  s.nodes = 1;
  s.workload.rsh_agent = "ssh -F /etc/fdrill/ssh_config";
  FakeProcessRunner runner;
  runner.On({"ssh", "-F", "/etc/fdrill/ssh_config", "gpu01", "true"}, ProcessResult{1, "", ""});
  Status st = CheckRshReachesEveryHost(s, runner, std::chrono::seconds(5));
  EXPECT_NE(st.message().find("  gpu01: exit 1\n"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace fdrill
