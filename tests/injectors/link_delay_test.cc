// link_delay against the recording fakes: FakeIptables over FakeNetKernel for
// the commands, FakeSysFs for /proc and /sys, and a FakeLine standing in for
// the NFQUEUE delay line, which binds and unbinds its queue in the fake
// /proc/net/netfilter/nfnetlink_queue as the kernel would.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "injectors/nfqueue_delay_line.h"
#include "tests/fakes/fake_host.h"
#include "tests/fakes/fake_iptables.h"
#include "tests/fakes/fake_net.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

constexpr char kQueueFile[] = "/proc/net/netfilter/nfnetlink_queue";

// A line of /proc/net/netfilter/nfnetlink_queue as the kernel prints it.
std::string QueueLine(unsigned queue, unsigned port) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%5u %6u %5u %1u %5u %5u %5u %8u %2d\n", queue, port, 0u, 1u, 0u,
                0u, 0u, 7u, 1);
  return buf;
}

struct Rig;

class FakeLine final : public DelayLine {
 public:
  explicit FakeLine(Rig* rig) : rig_(rig) {}
  ~FakeLine() override { Unbind(); }  // the socket closes with its owner
  Status Start(const DelayLineConfig& config) override;
  void Stop() override;
  std::optional<uint32_t> PortId() const override {
    return bound_ ? std::optional<uint32_t>(4242) : std::nullopt;
  }

 private:
  void Unbind();
  Rig* rig_;
  bool bound_ = false;
  uint16_t queue_ = 0;
};

struct Rig {
  FakeNetKernel kernel;
  FakeIptables ipt{&kernel};
  FakeSysFs sysfs;
  std::vector<DelayLineConfig> starts;
  int stops = 0;
  Status fail_start = Status::Ok();
  std::vector<std::string> events;  // "start", "stop", with whether our chain existed then
  std::string chain;

  Rig() { sysfs.files[kQueueFile] = ""; }
  Host host() { return Host{&ipt, &sysfs}; }
  bool ChainExists() {
    auto t = ipt.tables.find("filter");
    return t != ipt.tables.end() && t->second.chains.count(chain);
  }
  std::unique_ptr<Fault> Make(const Json& params) {
    return FaultOrStandIn(
        MakeLinkDelayWith(params, host(), [this] { return std::make_unique<FakeLine>(this); }));
  }
};

Status FakeLine::Start(const DelayLineConfig& config) {
  rig_->events.push_back(std::string("start, chain ") +
                         (rig_->ChainExists() ? "present" : "absent"));
  rig_->starts.push_back(config);
  if (!rig_->fail_start.ok()) return rig_->fail_start;
  bound_ = true;
  queue_ = config.queue;
  rig_->sysfs.files[kQueueFile] += QueueLine(queue_, 4242);
  return Status::Ok();
}

void FakeLine::Stop() {
  rig_->events.push_back(std::string("stop, chain ") +
                         (rig_->ChainExists() ? "present" : "absent"));
  ++rig_->stops;
  Unbind();
}

void FakeLine::Unbind() {
  if (!bound_) return;
  bound_ = false;
  std::string& text = rig_->sysfs.files[kQueueFile];
  std::string line = QueueLine(queue_, 4242);
  if (auto at = text.find(line); at != std::string::npos) text.erase(at, line.size());
}

const Json kParams = {{"interface", "fab0"}, {"delay", "20ms"}};

TEST(LinkDelay, NfqueueApplyVerifyRevertVerifyWithExactArgvAndOrder) {
  Rig rig;
  auto f = rig.Make(kParams);
  ASSERT_TRUE(f->Capture().ok()) << f->Capture().ToString();
  Json saved = f->Saved();
  EXPECT_EQ(saved["mode"], "nfqueue");  // no sch_netem in this fake kernel
  rig.chain = saved["chain"];
  EXPECT_EQ(rig.chain.rfind("FDRILL-DELAY-", 0), 0u);
  int queue = saved["queue"];
  EXPECT_GE(queue, 64768);
  EXPECT_LE(queue, 65023);
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  ASSERT_EQ(rig.starts.size(), 1u);
  EXPECT_EQ(rig.starts[0].queue, queue);
  EXPECT_EQ(rig.starts[0].delay, std::chrono::milliseconds(20));
  EXPECT_EQ(rig.starts[0].jitter, Duration(0));
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_FALSE(f->Verify().ok());
  EXPECT_TRUE(rig.ipt.tables.empty());
  // The reader is bound before the rule exists and unbound after it is gone.
  EXPECT_EQ(rig.events, (std::vector<std::string>{"start, chain absent", "stop, chain absent"}));
  std::string q = std::to_string(queue);
  Argv jump = {"-o", "fab0", "-m", "comment", "--comment", "fdrill:link_delay", "-j", rig.chain};
  Argv insert = {"-I", "OUTPUT", "1"}, del = {"-D", "OUTPUT"};
  insert.insert(insert.end(), jump.begin(), jump.end());
  del.insert(del.end(), jump.begin(), jump.end());
  std::vector<Argv> want = ThenChainRemoved(
      {
          Iptables({"-N", rig.chain}),
          Iptables({"-A", rig.chain, "-j", "NFQUEUE", "--queue-num", q, "--queue-bypass"}),
          Iptables(insert),
          Iptables(del),
      },
      rig.chain);
  EXPECT_EQ(rig.ipt.Mutations(), want);
}

TEST(LinkDelay, IngressFromOnePeerQueuesOnInputWithTheSourceMatch) {
  Rig rig;
  auto f = rig.Make({{"interface", "fab0"},
                     {"delay", "5ms"},
                     {"jitter", "1ms"},
                     {"direction", "ingress"},
                     {"peer", "198.18.0.2"}});
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Verify().ok());
  std::string chain = f->Saved()["chain"];
  std::string q = std::to_string(f->Saved()["queue"].get<int>());
  auto& filter = rig.ipt.tables.at("filter");
  EXPECT_EQ(filter.chains.at(chain).rules,
            (std::vector<Argv>{
                {"-s", "198.18.0.2", "-j", "NFQUEUE", "--queue-num", q, "--queue-bypass"}}));
  EXPECT_EQ(filter.chains.at("INPUT").rules,
            (std::vector<Argv>{
                {"-i", "fab0", "-m", "comment", "--comment", "fdrill:link_delay", "-j", chain}}));
  EXPECT_EQ(rig.starts.at(0).jitter, std::chrono::milliseconds(1));
  ASSERT_TRUE(Reverted(*f));
}

TEST(LinkDelay, VerifyNeedsOurLineBoundToTheQueue) {
  Rig rig;
  auto f = rig.Make(kParams);
  ASSERT_TRUE(CapturedAndApplied(*f));
  int queue = f->Saved()["queue"];
  rig.sysfs.files[kQueueFile] = QueueLine(queue, 999);  // someone else holds it
  EXPECT_TRUE(ErrorContains(f->Verify(), StatusCode::kFailedPrecondition, "netlink port 999"));
  rig.sysfs.files[kQueueFile] = "";  // nobody: --queue-bypass lets packets through
  EXPECT_TRUE(ErrorContains(f->Verify(), "no reader"));
  ASSERT_TRUE(f->Revert().ok());
}

TEST(LinkDelay, CaptureRefusesABoundQueue) {
  Rig rig;
  auto first = rig.Make(kParams);
  ASSERT_TRUE(first->Capture().ok());
  int queue = first->Saved()["queue"];
  rig.sysfs.files[kQueueFile] = QueueLine(queue, 77);
  auto second = rig.Make(kParams);
  EXPECT_TRUE(ErrorContains(second->Capture(), StatusCode::kFailedPrecondition,
                            "NFQUEUE " + std::to_string(queue)));
  EXPECT_TRUE(rig.ipt.Mutations().empty());
}

TEST(LinkDelay, FailedStartInsertsNoRuleAndRevertIsClean) {
  Rig rig;
  rig.fail_start = FailedPrecondition("NFQUEUE 64800 is bound by another process");
  auto f = rig.Make(kParams);
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(ErrorContains(f->Apply(), "bound by another process"));
  EXPECT_TRUE(rig.ipt.Mutations().empty());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(rig.stops, 0);
}

TEST(LinkDelay, RevertAfterAFailedRuleInsertRemovesTheChainThenStopsTheLine) {
  Rig rig;
  auto f = rig.Make(kParams);
  ASSERT_TRUE(f->Capture().ok());
  rig.chain = f->Saved()["chain"];
  rig.ipt.FailNext(Iptables({"-I"}), "iptables: Resource temporarily unavailable.\n");
  ASSERT_FALSE(f->Apply().ok());
  EXPECT_TRUE(rig.ChainExists());  // -N and -A ran
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(rig.events.back(), "stop, chain absent");
  EXPECT_TRUE(rig.ipt.tables.empty());
}

TEST(LinkDelay, RevertWithoutApplyAndRevertTwiceChangeNothingMore) {
  Rig rig;
  auto f = rig.Make(kParams);
  ASSERT_TRUE(f->Revert().ok());  // before Capture: nothing to undo
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, rig.ipt));
  EXPECT_EQ(rig.stops, 1);
}

TEST(LinkDelay, RevertKeepsTheLineWhileTheRuleCannotBeRemoved) {
  Rig rig;
  auto f = rig.Make(kParams);
  ASSERT_TRUE(CapturedAndApplied(*f));
  rig.ipt.FailNext(Iptables({"-D"}), "iptables: Resource temporarily unavailable.\n");
  ASSERT_FALSE(f->Revert().ok());
  EXPECT_EQ(rig.stops, 0);  // still delaying, not bypassing: the retry finds both
  ASSERT_TRUE(f->Verify().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(rig.stops, 1);
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(LinkDelay, RestoredFromJournalRemovesTheRuleALostAgentLeft) {
  Rig rig;
  // The agent dies with the fault applied; its socket closes, so the queue is unbound.
  Json record = JournalApplyAndDie("link_delay", kParams, rig.Make(kParams));
  EXPECT_EQ(rig.sysfs.files[kQueueFile], "");
  auto again = Restore(record, rig.host());  // the registry's real line: never started here
  EXPECT_FALSE(again->Verify().ok());
  ASSERT_TRUE(Reverted(*again));
  EXPECT_TRUE(rig.ipt.tables.empty());
}

TEST(LinkDelay, NetemWhereTheKernelHasIt) {
  Rig rig;
  rig.sysfs.files["/sys/module/sch_netem/refcnt"] = "0\n";
  auto f = rig.Make({{"interface", "fab0"}, {"delay", "20ms"}, {"jitter", "5ms"}});
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["mode"], "netem");
  EXPECT_EQ(f->Saved()["prior_kind"], "noqueue");
  ASSERT_TRUE(AppliedAndVerified(*f));
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(rig.kernel.Mutations(),
            (std::vector<Argv>{{"tc", "qdisc", "replace", "dev", "fab0", "root", "handle",
                                "fd2:", "netem", "delay", "20000us", "5000us"},
                               {"tc", "qdisc", "del", "dev", "fab0", "root"}}));
  EXPECT_TRUE(rig.ipt.Mutations().empty());
  EXPECT_TRUE(rig.starts.empty());
}

TEST(LinkDelay, NetemVerifyReadsTheKernelsDelayAndRefusesAForeignQdisc) {
  Rig rig;
  rig.sysfs.files["/sys/module/sch_netem/refcnt"] = "0\n";
  auto f = rig.Make(kParams);
  ASSERT_TRUE(CapturedAndApplied(*f));
  rig.kernel.ifaces["fab0"].qdisc_options["delay"]["delay"] = 0.005;
  EXPECT_EQ(f->Verify().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(f->Revert().ok());
  rig.kernel.ifaces["fab0"].qdisc_kind = "htb";
  rig.kernel.ifaces["fab0"].qdisc_handle = "1:";
  EXPECT_TRUE(ErrorContains(rig.Make(kParams)->Capture(), StatusCode::kFailedPrecondition, "htb"));
}

TEST(LinkDelay, NetemDetectionIsReadOnlyAndPeersOrIngressUseTheQueue) {
  for (const char* file : {"/lib/modules/6.1.0-18-amd64/kernel/net/sched/sch_netem.ko.xz",
                           "/lib/modules/6.1.0-18-amd64/kernel/net/sched/sch_netem.ko"}) {
    Rig rig;
    rig.sysfs.files["/proc/sys/kernel/osrelease"] = "6.1.0-18-amd64\n";
    rig.sysfs.files[file] = "";
    auto f = rig.Make(kParams);
    ASSERT_TRUE(f->Capture().ok());
    EXPECT_EQ(f->Saved()["mode"], "netem") << file;
    EXPECT_TRUE(rig.sysfs.writes.empty());
  }
  Rig builtin;
  builtin.sysfs.files["/proc/sys/kernel/osrelease"] = "6.1.0\n";
  builtin.sysfs.files["/lib/modules/6.1.0/modules.builtin"] =
      "kernel/net/sched/sch_tbf.ko\nkernel/net/sched/sch_netem.ko\n";
  auto f = builtin.Make(kParams);
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["mode"], "netem");
  auto peer = builtin.Make({{"interface", "fab0"}, {"delay", "20ms"}, {"peer", "198.18.0.2"}});
  ASSERT_TRUE(peer->Capture().ok());
  EXPECT_EQ(peer->Saved()["mode"], "nfqueue");
  auto ingress = builtin.Make({{"interface", "fab0"}, {"delay", "20ms"}, {"direction", "ingress"}});
  ASSERT_TRUE(ingress->Capture().ok());
  EXPECT_EQ(ingress->Saved()["mode"], "nfqueue");
}

TEST(LinkDelay, ParamsValidateAndNameTheKey) {
  Rig rig;
  auto expect_key = [&](const Json& params, const std::string& key) {
    EXPECT_TRUE(RefusedNaming("link_delay", params, rig.host(), key));
  };
  expect_key({{"interface", "fab0"}}, "delay");
  expect_key({{"interface", "fab0"}, {"delay", "20"}}, "delay");
  expect_key({{"interface", "fab0"}, {"delay", "0ms"}}, "delay");
  expect_key({{"interface", "fab0"}, {"delay", "11s"}}, "delay");
  expect_key({{"interface", "fab0"}, {"delay", "20ms"}, {"jitter", "21ms"}}, "jitter");
  expect_key({{"interface", "fab0"}, {"delay", "20ms"}, {"jitter", "fast"}}, "jitter");
  expect_key({{"delay", "20ms"}}, "interface");
  expect_key({{"interface", "fab0"}, {"delay", "20ms"}, {"direction", "both"}}, "direction");
  expect_key({{"interface", "fab0"}, {"delay", "20ms"}, {"peer", "n2"}}, "peer");
  EXPECT_TRUE(ErrorContains(
      ParamsError("link_delay", {{"interface", "fab0"}, {"delay", "20ms"}, {"jiter", "1ms"}},
                  rig.host()),
      "did you mean \"jitter\""));
  EXPECT_TRUE(rig.ipt.calls.empty());
}

TEST(LinkDelay, QueueAndChainFollowTheParams) {
  Rig rig;
  auto a = rig.Make(kParams), b = rig.Make(kParams),
       c = rig.Make({{"interface", "fab0"}, {"delay", "30ms"}});
  ASSERT_TRUE(a->Capture().ok() && b->Capture().ok() && c->Capture().ok());
  EXPECT_EQ(a->Saved()["queue"], b->Saved()["queue"]);
  EXPECT_EQ(a->Saved()["chain"], b->Saved()["chain"]);
  EXPECT_NE(a->Saved()["chain"], c->Saved()["chain"]);
}

TEST(LinkDelay, MechanismBeforeCaptureNamesBothWays) {
  Rig rig;
  auto lines = rig.Make(kParams)->Mechanism();
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  EXPECT_NE(all.find("with sch_netem: apply: tc qdisc replace dev fab0 root handle fd2: netem "
                     "delay 20000us 0us"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("without sch_netem: apply: iptables -w 5 -t filter -A FDRILL-DELAY-"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("--queue-bypass"), std::string::npos) << all;
  EXPECT_TRUE(rig.ipt.calls.empty());
}

// A machine with none of the tools: every exec fails as RealProcessRunner's does.
class NoTools final : public ProcessRunner {
 public:
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    return ProgramMissing(argv[0]);
  }
};

TEST(LinkDelay, ProbeNamesTheToolItsMechanismNeeds) {
  const InjectorInfo* info = FindInjector("link_delay");
  ASSERT_NE(info, nullptr);
  ASSERT_NE(info->probe, nullptr);
  const CapabilityProbe probe = info->probe;
  NoTools none;
  FakeSysFs no_netem, netem;
  netem.files["/sys/module/sch_netem/refcnt"] = "0\n";
  EXPECT_TRUE(ErrorContains(probe(Json::object(), Host{&none, &no_netem}), StatusCode::kUnsupported,
                            "needs iptables"));
  EXPECT_TRUE(ErrorContains(probe(Json::object(), Host{&none, &netem}), "needs tc"));
  EXPECT_TRUE(
      ErrorContains(probe({{"peer", "198.18.0.2"}}, Host{&none, &netem}), "needs iptables"));
  Rig rig;
  EXPECT_TRUE(probe({{"interface", "fab0"}}, rig.host()).ok());
  EXPECT_EQ(probe({{"interface", "fab9"}}, rig.host()).code(), StatusCode::kNotFound);
  EXPECT_TRUE(rig.ipt.Mutations().empty());
}

}  // namespace
}  // namespace fdrill
