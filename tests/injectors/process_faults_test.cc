// rank_pause, rank_kill, cpu_hog and mem_pressure against FakeProcessTable
// (tests/fakes/fake_processes.h) and FakeSysFs; the real /proc parser and
// fdrill-burn against this machine (no root needed).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "common/host/real_processes.h"
#include "injectors/burn_process.h"
#include "injectors/injector.h"
#include "tests/fakes/fake_host.h"
#include "tests/fakes/fake_processes.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

using Signals = std::vector<std::pair<int, int>>;

class ProcessFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    procs_.AddRank(100, 0);
    procs_.AddRank(101, 1);
    procs_.AddRank(102, 2, "net:[4026530000]");  // another node's rank
    procs_.Add(103, "sshd");
  }
  Host MakeHost() { return Host{&runner_, &sysfs_, &procs_}; }
  std::unique_ptr<Fault> Make(const std::string& kind, Json params) {
    return MakeOk(kind, params, MakeHost());
  }
  std::string MakeError(const std::string& kind, Json params) {
    auto f = MakeFault(kind, params, MakeHost());
    EXPECT_FALSE(f.ok());
    return f.ok() ? "" : f.status().message();
  }

  FakeProcessRunner runner_;
  FakeSysFs sysfs_;
  FakeProcessTable procs_;
};

TEST_F(ProcessFaults, RankPauseStopsOnlyThisNodesRanksAndResumesThem) {
  auto f = Make("rank_pause", Json::object());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["ranks"].size(), 2u);
  ASSERT_TRUE(f->Apply().ok());
  EXPECT_EQ(procs_.signals, (Signals{{100, SIGSTOP}, {101, SIGSTOP}}));
  EXPECT_EQ(procs_.procs[100].state, 'T');
  EXPECT_EQ(procs_.procs[102].state, 'S');  // another namespace: another node
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(procs_.procs[100].state, 'S');
  EXPECT_EQ(procs_.procs[101].state, 'S');
  ASSERT_TRUE(f->Revert().ok());  // twice: SIGCONT to a running process is harmless
  EXPECT_TRUE(f->VerifyReverted().ok());
  for (const auto& [pid, sig] : procs_.signals) EXPECT_TRUE(pid == 100 || pid == 101) << pid;
}

TEST_F(ProcessFaults, RankPauseOfOneRank) {
  auto f = Make("rank_pause", {{"rank", 1}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  EXPECT_EQ(procs_.signals, (Signals{{101, SIGSTOP}}));
  EXPECT_EQ(procs_.procs[100].state, 'S');
  ASSERT_TRUE(f->Revert().ok());
}

// Issue 50: a job's ranks are the processes `fdrill job-rank` started
// (FDRILL_JOB_RANK in their environment), whatever their program; the
// wrapper itself, and a python of anybody else's, are not.
TEST_F(ProcessFaults, AJobsRankIsTheProcessJobRankStartedNotTheWrapper) {
  procs_.procs.clear();
  ProcInfo& job = procs_.Add(200, "python3.11");
  job.env = {{"OMPI_COMM_WORLD_RANK", "2"}, {"FDRILL_JOB_RANK", "2"}};
  procs_.Add(199, "fdrill").env = {{"OMPI_COMM_WORLD_RANK", "2"}};      // the wrapper
  procs_.Add(300, "python3.11").env = {{"OMPI_COMM_WORLD_RANK", "2"}};  // not ours
  auto f = Make("rank_kill", {{"rank", 2}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  EXPECT_EQ(procs_.signals, (Signals{{200, SIGKILL}}));
}

TEST_F(ProcessFaults, ChecksBeforeTheWorkloadRunsButSelectsOnlyWhenApplied) {
  auto f = Make("rank_pause", {{"rank", 7}});
  EXPECT_TRUE(f->Check().ok());  // the pre-drill check: no ranks exist yet
  Status s = f->Capture();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("params.rank: no workload rank (fdrill-collective, or a job's "
                             "process under fdrill job-rank; rank 7)"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(procs_.signals.empty());
}

TEST_F(ProcessFaults, JournalSweepResumesTheSavedProcessesButNotAReusedPid) {
  auto f = Make("rank_pause", Json::object());
  ASSERT_TRUE(f->Capture().ok());
  Json record = {{"kind", "rank_pause"}, {"params", Json::object()}, {"saved", f->Saved()}};
  ASSERT_TRUE(f->Apply().ok());
  // The agent dies; pid 101 ends and is reused by an unrelated process.
  procs_.procs.erase(101);
  procs_.Add(101, "bash").start_ticks = 99999;
  procs_.signals.clear();
  auto restored = RestoreFault(record, MakeHost());
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  ASSERT_TRUE((*restored)->Revert().ok());
  EXPECT_EQ(procs_.signals, (Signals{{100, SIGCONT}}));
  EXPECT_TRUE((*restored)->VerifyReverted().ok());
}

TEST_F(ProcessFaults, RevertAfterAFailedApplyResumesWhatWasStopped) {
  auto f = Make("rank_pause", Json::object());
  ASSERT_TRUE(f->Capture().ok());
  procs_.fail_signal = true;
  EXPECT_FALSE(f->Apply().ok());
  procs_.fail_signal = false;
  procs_.procs[100].state = 'T';  // as if the first stop had landed
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(procs_.procs[100].state, 'S');
}

TEST_F(ProcessFaults, StragglerIsStoppedOnOfEveryPeriod) {
  auto f = Make("rank_pause", {{"rank", 0}, {"on", "20ms"}, {"period", "100ms"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  EXPECT_EQ(procs_.procs[100].state, 'T');
  ASSERT_TRUE(f->Tick(std::chrono::milliseconds(10)).ok());
  EXPECT_EQ(procs_.procs[100].state, 'T');
  ASSERT_TRUE(f->Tick(std::chrono::milliseconds(50)).ok());
  EXPECT_EQ(procs_.procs[100].state, 'S');
  ASSERT_TRUE(f->Verify().ok());  // in its running phase, and observed so
  ASSERT_TRUE(f->Tick(std::chrono::milliseconds(60)).ok());
  ASSERT_TRUE(f->Tick(std::chrono::milliseconds(110)).ok());
  EXPECT_EQ(procs_.procs[100].state, 'T');
  EXPECT_EQ(procs_.signals, (Signals{{100, SIGSTOP}, {100, SIGCONT}, {100, SIGSTOP}}));
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(procs_.procs[100].state, 'S');
}

// The agent wakes for a straggler's edges only (AgentService::TickInterval):
// the end of each `on` window and the start of each period, strictly ahead.
TEST_F(ProcessFaults, StragglerSaysWhenItsNextEdgeIsDue) {
  using std::chrono::milliseconds;
  auto f = Make("rank_pause", {{"rank", 0}, {"on", "20ms"}, {"period", "100ms"}});
  EXPECT_EQ(f->NextChange(milliseconds(0)), milliseconds(20));
  EXPECT_EQ(f->NextChange(milliseconds(19)), milliseconds(20));
  EXPECT_EQ(f->NextChange(milliseconds(20)), milliseconds(100));
  EXPECT_EQ(f->NextChange(milliseconds(99)), milliseconds(100));
  EXPECT_EQ(f->NextChange(milliseconds(100)), milliseconds(120));
  EXPECT_EQ(f->NextChange(milliseconds(250)), milliseconds(300));
  EXPECT_EQ(Make("rank_pause", Json::object())->NextChange(milliseconds(5)), std::nullopt);
}

TEST_F(ProcessFaults, RankParamsNameTheKey) {
  EXPECT_NE(MakeError("rank_pause", {{"rank", -1}}).find("params.rank"), std::string::npos);
  EXPECT_NE(MakeError("rank_pause", {{"on", "20ms"}}).find("params.period"), std::string::npos);
  EXPECT_NE(MakeError("rank_pause", {{"on", "200ms"}, {"period", "100ms"}}).find("params.on"),
            std::string::npos);
  EXPECT_NE(MakeError("rank_pause", {{"rnak", 1}}).find("did you mean \"rank\""),
            std::string::npos);
  std::string sig = MakeError("rank_kill", {{"signal", "HUP"}});
  EXPECT_NE(sig.find("params.signal: \"HUP\" is not one of KILL, TERM"), std::string::npos) << sig;
}

TEST_F(ProcessFaults, RankKillSignalsAndHasNothingToRestore) {
  auto f = Make("rank_kill", {{"rank", 0}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  EXPECT_EQ(procs_.signals, (Signals{{100, SIGKILL}}));
  EXPECT_EQ(procs_.procs.count(100), 0u);
  ASSERT_TRUE(f->Verify().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(procs_.signals.size(), 1u);

  auto term = Make("rank_kill", {{"signal", "sigterm"}});
  ASSERT_TRUE(term->Capture().ok());
  ASSERT_TRUE(term->Apply().ok());
  EXPECT_EQ(procs_.signals.back(), std::make_pair(101, SIGTERM));
}

constexpr char kMountinfo[] =
    "25 1 0:23 / /sys rw,nosuid - sysfs sysfs rw\n"
    "36 25 0:31 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw\n"
    "37 25 0:32 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n";

TEST(CgroupV2Mount, FindsTheUnifiedMount) {
  EXPECT_EQ(CgroupV2Mount(kMountinfo), "/sys/fs/cgroup/unified");
  EXPECT_EQ(CgroupV2Mount("25 1 0:23 / /sys rw - sysfs sysfs rw\n"), "");
}

TEST_F(ProcessFaults, CpuHogRunsBurnInItsOwnCgroupAndKillsItOnRevert) {
  sysfs_.files["/proc/self/mountinfo"] = kMountinfo;
  auto f = Make("cpu_hog", {{"threads", 2}});
  ASSERT_TRUE(f->Capture().ok());
  const std::string cg = f->Saved()["cgroup"];
  // Named by the agent's netns (the fake's net:[4026531999]), then its pid.
  EXPECT_EQ(cg.rfind("/sys/fs/cgroup/unified/fdrill-burn-4026531999-4242-", 0), 0u) << cg;
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_EQ(procs_.spawned.size(), 1u);
  EXPECT_EQ(procs_.spawned[0], (std::vector<std::string>{"fdrill-burn", "cpu", "2", "4242"}));
  EXPECT_EQ(sysfs_.dirs_made, std::vector<std::string>{cg});
  EXPECT_EQ(sysfs_.files[cg + "/cgroup.procs"], "9000");
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(procs_.signals, (Signals{{9000, SIGKILL}}));
  EXPECT_EQ(procs_.reaped, std::vector<int>{9000});
  EXPECT_EQ(sysfs_.dirs_removed, std::vector<std::string>{cg});
  ASSERT_TRUE(f->VerifyReverted().ok());
  ASSERT_TRUE(f->Revert().ok());  // twice: nothing more is killed
  EXPECT_EQ(procs_.signals.size(), 1u);
}

TEST_F(ProcessFaults, CpuHogWithoutCgroupV2StillKillsByPid) {
  sysfs_.files["/proc/self/mountinfo"] = "25 1 0:23 / /sys rw - sysfs sysfs rw\n";
  auto f = Make("cpu_hog", Json::object());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["cgroup"], "");
  ASSERT_TRUE(f->Apply().ok());
  EXPECT_TRUE(sysfs_.dirs_made.empty());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(procs_.signals, (Signals{{9000, SIGKILL}}));
}

TEST_F(ProcessFaults, FailedSpawnLeavesNoCgroup) {
  sysfs_.files["/proc/self/mountinfo"] = kMountinfo;
  procs_.fail_spawn = true;
  auto f = Make("cpu_hog", Json::object());
  ASSERT_TRUE(f->Capture().ok());
  Status s = f->Apply();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cpu_hog"), std::string::npos) << s.message();
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(sysfs_.dirs_removed.size(), 1u);
  EXPECT_TRUE(f->VerifyReverted().ok());
  EXPECT_TRUE(procs_.signals.empty());
}

TEST_F(ProcessFaults, SweepKillsWhatIsLeftInTheJournalledCgroup) {
  sysfs_.files["/proc/self/mountinfo"] = kMountinfo;
  auto f = Make("mem_pressure", {{"size", "64M"}});
  ASSERT_TRUE(f->Capture().ok());
  Json record = {{"kind", "mem_pressure"}, {"params", {{"size", "64M"}}}, {"saved", f->Saved()}};
  const std::string cg = f->Saved()["cgroup"];
  // The agent died after Apply: the burn process outlived it in the group.
  ASSERT_TRUE(sysfs_.MakeDir(cg).ok());
  sysfs_.files[cg + "/cgroup.procs"] = "9000\n";
  auto restored = RestoreFault(record, MakeHost());
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  ASSERT_TRUE((*restored)->Revert().ok());
  ASSERT_GE(sysfs_.writes.size(), 1u);
  EXPECT_EQ(sysfs_.writes.back(), std::make_pair(cg + "/cgroup.kill", std::string("1")));
  EXPECT_TRUE((*restored)->VerifyReverted().ok());
}

TEST_F(ProcessFaults, MemPressureIsInForceOnceResident) {
  procs_.spawn_rss_kib = 64 * 1024;
  auto f = Make("mem_pressure", {{"size", "64M"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  EXPECT_EQ(procs_.spawned[0],
            (std::vector<std::string>{"fdrill-burn", "mem", std::to_string(64 << 20), "4242"}));
  ASSERT_TRUE(f->Verify().ok());
  procs_.procs[9000].rss_kib = 1024;  // swapped out: no longer pressure
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_NE(MakeError("mem_pressure", {{"size", "12K"}}).find("params.size"), std::string::npos);
}

TEST(RealProcesses, ParsesStatWithAwkwardComm) {
  ProcInfo info;
  ASSERT_TRUE(ParseProcStat(
                  "123 (a) b (c)) T 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 777 23", &info)
                  .ok());
  EXPECT_EQ(info.state, 'T');
  EXPECT_EQ(info.start_ticks, 777u);
  EXPECT_EQ(info.cpu_ticks, 14u + 15u);  // utime + stime
  EXPECT_FALSE(ParseProcStat("garbage", &info).ok());
}

// Stat (the telemetry's per-second read of a known rank) reads stat alone:
// the same start time and state as Inspect, nothing of exe, ns or environ.
TEST(RealProcesses, StatReadsOnlyTheStatFile) {
  RealProcessTable table;
  auto stat = table.Stat(getpid());
  auto full = table.Inspect(getpid());
  ASSERT_TRUE(stat.ok() && full.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->pid, getpid());
  EXPECT_EQ(stat->start_ticks, full->start_ticks);
  EXPECT_EQ(stat->state, 'R');
  EXPECT_TRUE(stat->exe_name.empty());
  EXPECT_TRUE(stat->net_ns.empty());
  EXPECT_TRUE(stat->env.empty());
  auto gone = RealProcessTable("/nonexistent").Stat(getpid());
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
}

TEST(RealProcesses, InspectsItselfAndRunsKillsAndReapsAChild) {
  RealProcessTable table;
  auto self = table.Inspect(getpid());
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  EXPECT_EQ(self->exe_name, "injectors_process_test");
  EXPECT_EQ(self->net_ns, table.OwnNetNs());
  EXPECT_FALSE(self->net_ns.empty());
  EXPECT_TRUE(self->env.count("PATH"));
  EXPECT_GT(self->rss_kib, 0u);

  auto pid = table.Spawn({"sleep", "30"});
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  auto child = table.Inspect(*pid);
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(
      SignalIfSame(table, *pid, child->start_ticks + 1, SIGKILL).ok());  // not the same: untouched
  EXPECT_TRUE(table.Inspect(*pid).ok());
  ASSERT_TRUE(SignalIfSame(table, *pid, child->start_ticks, SIGKILL).ok());
  table.Reap(*pid);
  EXPECT_EQ(table.Inspect(*pid).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(table.Signal(*pid, 0).code(), StatusCode::kNotFound);
}

TEST(RealProcesses, BurnHoldsItsMemoryAndDiesWhenKilled) {
  RealProcessTable table;
  auto pid =
      table.Spawn({FDRILL_BURN_PATH, "mem", std::to_string(32 << 20), std::to_string(getpid())});
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  uint64_t rss = 0;
  for (int i = 0; i < 250 && rss < 30 * 1024; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto info = table.Inspect(*pid);
    ASSERT_TRUE(info.ok());
    rss = info->rss_kib;
  }
  EXPECT_GE(rss, 30u * 1024);
  ASSERT_TRUE(table.Signal(*pid, SIGKILL).ok());
  table.Reap(*pid);
  EXPECT_EQ(table.Inspect(*pid).status().code(), StatusCode::kNotFound);
}

TEST(RealProcesses, BurnRefusesAParentThatIsNotItsOwn) {
  RealProcessTable table;
  auto pid = table.Spawn({FDRILL_BURN_PATH, "cpu", "1", "1"});
  ASSERT_TRUE(pid.ok());
  table.Reap(*pid);  // exits at once instead of spinning forever
  EXPECT_EQ(table.Inspect(*pid).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

// daemon_pause: this node's slurmd only (another node's, in another network
// namespace, and every other process are left alone); SIGCONT to the same
// (pid, start time) after a journal round trip; nothing but slurmd can be named.
TEST_F(ProcessFaults, DaemonPauseStopsThisNodesSlurmdOnlyAndResumesIt) {
  procs_.Add(200, "slurmd-wlm");  // Debian's slurmd, behind the slurmd alternative
  procs_.Add(201, "slurmd").net_ns = "net:[4026530000]";  // n2's
  procs_.Add(202, "slurmstepd");
  auto f = Make("daemon_pause", {{"daemon", "slurmd"}});
  ASSERT_TRUE(f->Check().ok());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->ResolvedTarget(), "slurmd (pid 200)");
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_EQ(procs_.signals, (Signals{{200, SIGSTOP}}));
  EXPECT_EQ(procs_.procs[201].state, 'S');
  EXPECT_EQ(procs_.procs[202].state, 'S');
  // A restarted agent's sweep: only the journal's saved state.
  auto swept = Make("daemon_pause", {{"daemon", "slurmd"}});
  ASSERT_TRUE(swept->Load(f->Saved()).ok());
  EXPECT_FALSE(swept->VerifyReverted().ok());
  ASSERT_TRUE(swept->Revert().ok());
  ASSERT_TRUE(swept->VerifyReverted().ok());
  EXPECT_EQ(procs_.procs[200].state, 'S');
  ASSERT_TRUE(swept->Revert().ok());  // twice is harmless
  // A reused pid is never signalled.
  procs_.procs[200].start_ticks += 1;
  procs_.signals.clear();
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_TRUE(procs_.signals.empty());
}

TEST_F(ProcessFaults, DaemonPauseNamesOnlySlurmdAndNeedsOneOnTheNode) {
  EXPECT_EQ(MakeError("daemon_pause", {{"daemon", "sshd"}}),
            "params.daemon: \"sshd\" is not one of slurmd (the daemons a drill may pause)");
  auto f = Make("daemon_pause", {{"daemon", "slurmd"}});
  Status check = f->Check();
  EXPECT_EQ(check.code(), StatusCode::kNotFound);
  EXPECT_NE(check.message().find("no slurmd runs on this node"), std::string::npos)
      << check.message();
  EXPECT_TRUE(procs_.signals.empty());
}

}  // namespace
}  // namespace fdrill
