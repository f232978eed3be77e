#include "agents/agent_service.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/wire/protocol.h"
#include "tests/agents/test_agent.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_net.h"
#include "tests/fakes/fake_processes.h"
#include "tests/support/json_lines.h"

namespace fdrill {
namespace {

// Records, at the moment each state-changing command runs, how many faults
// the journal held: proves the journal is written before a fault is applied.
class JournalWatchingKernel final : public ProcessRunner {
 public:
  JournalWatchingKernel(FakeNetKernel& kernel, std::string journal)
      : k_(kernel), journal_(std::move(journal)) {}
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration t) override {
    if (argv.size() > 1 && argv[1] != "-j")
      pending_at_mutation.push_back(Journal(journal_).Pending()->size());
    return k_.Run(argv, t);
  }
  std::vector<size_t> pending_at_mutation;

 private:
  FakeNetKernel& k_;
  std::string journal_;
};

class AgentServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ScratchPath("fdrill-agent-test-");
    std::filesystem::create_directories(dir_);
    watcher_ = std::make_unique<JournalWatchingKernel>(kernel_, (dir_ / "journal.jsonl").string());
    service_ = MakeService();
    // The controller's lease (agents/lease.h): applies need it. A day, so
    // a test that moves the fake clock does not lose it by accident.
    ASSERT_TRUE(Call("lease", {{"ttl_ms", 86400000}})["ok"].get<bool>());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<AgentService> MakeService() {
    return std::make_unique<AgentService>(TestAgentConfig("n1", dir_),
                                          Host{watcher_.get(), nullptr}, clock_);
  }

  Json Call(const std::string& type, Json body = Json::object()) {
    return service_->Handle(MakeRequest(type, ++id_, std::move(body)), "test");
  }
  Json ApplyRate(const std::string& id, const std::string& iface = "fab0") {
    return Call("apply", {{"fault_id", id},
                          {"kind", "link_rate"},
                          {"params", {{"interface", iface}, {"rate", "100mbit"}}}});
  }

  std::filesystem::path dir_;
  FakeNetKernel kernel_;
  std::unique_ptr<JournalWatchingKernel> watcher_;
  FakeClock clock_;
  std::unique_ptr<AgentService> service_;
  uint64_t id_ = 0;
};

TEST_F(AgentServiceTest, RepliesEchoTheRequestId) {
  Json reply = Call("hello");
  EXPECT_EQ(reply["id"], id_);
  EXPECT_TRUE(reply["ok"].get<bool>());
  EXPECT_EQ(reply["node"], "n1");
  Json bad = Call("explode");
  EXPECT_EQ(bad["id"], id_);
  EXPECT_FALSE(bad["ok"].get<bool>());
  EXPECT_NE(bad["error"].get<std::string>().find("explode"), std::string::npos);
}

TEST_F(AgentServiceTest, JournalIsWrittenBeforeTheFaultIsApplied) {
  Json reply = ApplyRate("slow");
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  EXPECT_TRUE(reply["verified"].get<bool>());
  ASSERT_EQ(watcher_->pending_at_mutation.size(), 1u);
  EXPECT_EQ(watcher_->pending_at_mutation[0], 1u);  // tc ran with the record already durable
  Json revert = Call("revert", {{"fault_id", "slow"}});
  ASSERT_TRUE(revert["ok"].get<bool>()) << revert.dump();
  EXPECT_TRUE(Journal((dir_ / "journal.jsonl").string()).Pending()->empty());
  EXPECT_EQ(kernel_.ifaces["fab0"].qdisc_kind, "noqueue");
  EXPECT_TRUE(Call("revert", {{"fault_id", "slow"}})["ok"].get<bool>());  // twice is harmless
}

// A field of the wrong JSON type is the request's fault: an error reply
// naming it, nothing applied or journalled, and the service still serves
// (it used to throw out of Handle, so the agent dropped the connection; an
// apply with a bad max_duration_ms left its fault in force but untracked).
TEST_F(AgentServiceTest, AFieldOfTheWrongTypeIsRefusedBeforeAnythingIsTouched) {
  Json bad_limit = Call("apply", {{"fault_id", "slow"},
                                  {"kind", "link_rate"},
                                  {"max_duration_ms", "5s"},
                                  {"params", {{"interface", "fab0"}, {"rate", "100mbit"}}}});
  EXPECT_FALSE(bad_limit["ok"].get<bool>()) << bad_limit.dump();
  EXPECT_EQ(bad_limit["code"], "invalid_argument");
  EXPECT_NE(bad_limit["error"].get<std::string>().find("wrong type"), std::string::npos)
      << bad_limit.dump();
  Json bad_id = Call("revert", {{"fault_id", 5}});
  EXPECT_FALSE(bad_id["ok"].get<bool>()) << bad_id.dump();
  EXPECT_EQ(bad_id["id"], id_);
  EXPECT_TRUE(kernel_.Mutations().empty());
  EXPECT_TRUE(Journal((dir_ / "journal.jsonl").string()).Pending()->empty());
  EXPECT_EQ(service_->active_faults(), 0u);
  EXPECT_TRUE(ApplyRate("slow")["ok"].get<bool>());  // still serving
}

// The request's own "type" and "id" of the wrong JSON type (found by
// fuzz/agent_request_fuzz.cc: {"type":4} threw out of Handle, so the real
// agent dropped the connection without a reply or an audit line).
TEST_F(AgentServiceTest, ARequestWhoseTypeOrIdIsNotAStringOrNumberGetsAnErrorReply) {
  Json numeric_type = MakeRequest("apply", 7);
  numeric_type["type"] = 4;
  Json reply = service_->Handle(numeric_type, "test");
  EXPECT_FALSE(reply["ok"].get<bool>()) << reply.dump();
  EXPECT_EQ(reply["code"], "invalid_argument");
  EXPECT_NE(reply["error"].get<std::string>().find("\"type\""), std::string::npos) << reply.dump();
  EXPECT_EQ(reply["id"], 7);
  Json text_id = MakeRequest("hello", 8);
  text_id["id"] = "eight";
  reply = service_->Handle(text_id, "test");
  EXPECT_TRUE(reply["ok"].get<bool>()) << reply.dump();  // answered, under id 0
  EXPECT_EQ(reply["id"], 0);
  EXPECT_TRUE(kernel_.Mutations().empty());
  EXPECT_TRUE(ApplyRate("slow")["ok"].get<bool>());  // still serving
}

TEST_F(AgentServiceTest, ALeaseWhoseTtlIsNotAnIntegerIsRefusedAndNothingIsHeld) {
  // 5e31 does not fit an int64: converting it was undefined behaviour (fuzzer).
  for (Json ttl : {Json(5.04444e+31), Json(1500.5), Json("5000"), Json(UINT64_MAX)}) {
    Json lease = MakeRequest("lease", 9);
    lease["ttl_ms"] = ttl;
    lease["drill"] = "d1";
    Json reply = service_->Handle(lease, "test");
    EXPECT_FALSE(reply["ok"].get<bool>()) << ttl.dump();
    EXPECT_EQ(reply["code"], "invalid_argument") << reply.dump();
    EXPECT_NE(reply["error"].get<std::string>().find("ttl_ms"), std::string::npos) << reply.dump();
  }
  EXPECT_TRUE(kernel_.Mutations().empty());
  EXPECT_TRUE(ApplyRate("slow")["ok"].get<bool>());  // still serving
}

// The lease prepares the journal (Journal::Prepare): the file is there
// before the first fault, and an agent that cannot keep one refuses the
// lease, so no fault can be applied through it.
TEST_F(AgentServiceTest, TheLeasePreparesTheJournalOrIsRefused) {
  EXPECT_EQ(std::filesystem::file_size(dir_ / "journal.jsonl"), Journal::kMinStep);
  EXPECT_TRUE(Journal((dir_ / "journal.jsonl").string()).Pending()->empty());

  std::ofstream(dir_ / "not-a-dir") << "x";
  auto config = TestAgentConfig("n2", dir_ / "not-a-dir");
  AgentService broken(config, Host{watcher_.get(), nullptr}, clock_);
  Json reply = broken.Handle(MakeRequest("lease", 1, {{"ttl_ms", 5000}, {"drill", "d1"}}), "test");
  ASSERT_FALSE(reply["ok"].get<bool>()) << reply.dump();
  const std::string error = reply["error"].get<std::string>();
  EXPECT_NE(error.find("cannot keep its fault journal"), std::string::npos) << error;
  EXPECT_NE(error.find("not-a-dir"), std::string::npos) << error;
  reply = broken.Handle(MakeRequest("apply", 2,
                                    {{"fault_id", "slow"},
                                     {"kind", "link_rate"},
                                     {"params", {{"interface", "fab0"}, {"rate", "100mbit"}}}}),
                        "test");
  EXPECT_FALSE(reply["ok"].get<bool>()) << reply.dump();
  EXPECT_TRUE(kernel_.Mutations().empty());
}

TEST_F(AgentServiceTest, RefusesTheManagementInterfaceAndTouchesNothing) {
  Json reply = ApplyRate("cut", "mgmt0");
  EXPECT_FALSE(reply["ok"].get<bool>());
  EXPECT_NE(reply["error"].get<std::string>().find("management path"), std::string::npos);
  EXPECT_TRUE(kernel_.Mutations().empty());
  EXPECT_TRUE(Journal((dir_ / "journal.jsonl").string()).Pending()->empty());
}

TEST_F(AgentServiceTest, CheckFindsAMissingInterfaceWithoutTouchingAnything) {
  Json reply =
      Call("check",
           {{"faults", Json::array({{{"fault_id", "slow"},
                                     {"kind", "link_rate"},
                                     {"params", {{"interface", "fab7"}, {"rate", "1gbit"}}}}})}});
  EXPECT_FALSE(reply["ok"].get<bool>());
  std::string err = reply["error"];
  EXPECT_NE(err.find("n1"), std::string::npos) << err;
  EXPECT_NE(err.find("fault slow"), std::string::npos) << err;
  EXPECT_NE(err.find("fab7"), std::string::npos) << err;
  EXPECT_TRUE(kernel_.Mutations().empty());
}

// The agent answers every request type of the protocol's one table (a type
// added there but not to Dispatch would be "unknown request type").
TEST_F(AgentServiceTest, AnswersEveryRequestTypeOfTheProtocol) {
  for (std::string_view type : proto::kRequestTypes) {
    Json reply = Call(std::string(type));
    if (reply["ok"].get<bool>()) continue;
    EXPECT_EQ(reply["error"].get<std::string>().find("unknown request type"), std::string::npos)
        << type << ": " << reply.dump();
  }
}

// A check whose item names its fault with another key than FaultSpec's
// (check sent "id" before the one table) is refused whole, naming the key,
// before any fault is checked; the audit line records which faults a check
// covered.
TEST_F(AgentServiceTest, CheckReadsEveryFaultSpecBeforeCheckingAny) {
  Json good = {{"fault_id", "slow"},
               {"kind", "link_rate"},
               {"params", {{"interface", "fab0"}, {"rate", "1gbit"}}}};
  Json renamed = {{"id", "cut"}, {"kind", "link_down"}, {"params", {{"interface", "fab0"}}}};
  Json reply = Call("check", {{"faults", Json::array({good, renamed})}});
  EXPECT_FALSE(reply["ok"].get<bool>());
  EXPECT_EQ(reply["code"], "invalid_argument");
  EXPECT_NE(reply["error"].get<std::string>().find("needs a \"fault_id\""), std::string::npos)
      << reply.dump();
  EXPECT_TRUE(Call("check", {{"faults", Json::array({good})}})["ok"].get<bool>());
  EXPECT_TRUE(kernel_.Mutations().empty());
  std::ifstream audit(dir_ / "audit.jsonl");
  std::string line, last;
  while (std::getline(audit, line)) last = line;
  EXPECT_EQ(Json::parse(last)["faults"][0]["fault_id"], "slow") << last;
}

TEST_F(AgentServiceTest, FailedApplyIsRevertedAndLeavesNoJournalEntry) {
  kernel_.FailNext({"tc", "qdisc", "replace"}, "RTNETLINK answers: No space left\n");
  Json reply = ApplyRate("slow");
  EXPECT_FALSE(reply["ok"].get<bool>());
  EXPECT_TRUE(Journal((dir_ / "journal.jsonl").string()).Pending()->empty());
  EXPECT_EQ(service_->active_faults(), 0u);
}

TEST_F(AgentServiceTest, LapsedLeaseRevertsEverything) {
  ASSERT_TRUE(Call("lease", {{"ttl_ms", 5000}})["ok"].get<bool>());
  ASSERT_TRUE(ApplyRate("slow")["ok"].get<bool>());
  ASSERT_TRUE(Call("apply", {{"fault_id", "flap"},
                             {"kind", "link_flap"},
                             {"params", {{"interface", "fab0"}, {"down", "60s"}}}})["ok"]
                  .get<bool>());
  std::vector<Json> pushed;
  service_->set_push([&](Json m) { pushed.push_back(m); });
  clock_.Advance(std::chrono::milliseconds(4900));
  service_->Tick();
  EXPECT_EQ(service_->active_faults(), 2u);
  EXPECT_FALSE(kernel_.ifaces["fab0"].up);
  clock_.Advance(std::chrono::milliseconds(200));
  service_->Tick();
  EXPECT_EQ(service_->active_faults(), 0u);
  EXPECT_TRUE(kernel_.ifaces["fab0"].up);
  EXPECT_EQ(kernel_.ifaces["fab0"].qdisc_kind, "noqueue");
  ASSERT_FALSE(pushed.empty());
  EXPECT_EQ(pushed.back()["type"], "lease_expired");
}

TEST_F(AgentServiceTest, ARestartedAgentRevertsWhatItsJournalHolds) {
  ASSERT_TRUE(ApplyRate("slow")["ok"].get<bool>());
  EXPECT_EQ(kernel_.ifaces["fab0"].qdisc_kind, "tbf");
  service_.reset();  // the agent died without reverting (SIGKILL)
  // (the destructor does not revert: only a journal sweep or a lease does)
  EXPECT_EQ(kernel_.ifaces["fab0"].qdisc_kind, "tbf");
  service_ = MakeService();
  auto swept = service_->SweepJournal();
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(*swept, 1);
  EXPECT_EQ(kernel_.ifaces["fab0"].qdisc_kind, "noqueue");
  EXPECT_EQ(*service_->SweepJournal(), 0);  // idempotent
}

// Issue 21: a controller that lost the agent learns from the restarted one's
// hello which faults its start-up sweep reverted, and when.
TEST_F(AgentServiceTest, HelloSaysWhatTheStartUpSweepReverted) {
  EXPECT_FALSE(Call("hello").contains("start_sweep")) << "no start-up sweep ran";
  ASSERT_TRUE(ApplyRate("slow")["ok"].get<bool>());
  service_.reset();  // SIGKILL
  service_ = MakeService();
  clock_.Advance(std::chrono::seconds(2));
  const int64_t swept_at = clock_.WallNanos();
  auto swept = service_->SweepAtStart();
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(*swept, 1);
  EXPECT_EQ(kernel_.ifaces["fab0"].qdisc_kind, "noqueue");
  Json hello = Call("hello");
  ASSERT_TRUE(hello.contains("start_sweep")) << hello.dump();
  EXPECT_EQ(hello["start_sweep"]["wall_ns"], swept_at);
  EXPECT_EQ(hello["start_sweep"]["faults"],
            Json::array({{{"fault_id", "slow"}, {"kind", "link_rate"}, {"target", "fab0"}}}));
  // The next life found nothing: an empty list, not the previous one's.
  service_ = MakeService();
  ASSERT_TRUE(service_->SweepAtStart().ok());
  EXPECT_EQ(Call("hello")["start_sweep"]["faults"], Json::array());
}

// The reply names what the fault acts on as resolved here, so the controller
// need not guess it from the params (an IB port, a GPU, a rank has no
// params.interface).
TEST_F(AgentServiceTest, ApplyReplyCarriesTheResolvedTarget) {
  Json reply = ApplyRate("cut");
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  EXPECT_EQ(reply["target"], "fab0");
  Json again = ApplyRate("cut");
  EXPECT_TRUE(again["already_applied"].get<bool>()) << again.dump();
  EXPECT_EQ(again["target"], "fab0");

  FakeProcessTable procs;
  procs.AddRank(1234, 2);
  AgentConfig c;
  c.node = "n1";
  c.state_dir = (dir_ / "ranks").string();
  std::filesystem::create_directories(c.state_dir);
  AgentService ranks(c, Host{watcher_.get(), nullptr, &procs}, clock_);
  ASSERT_TRUE(ranks.Handle(MakeRequest("lease", 9, {{"ttl_ms", 5000}}), "test")["ok"].get<bool>());
  Json paused = ranks.Handle(
      MakeRequest("apply", 1,
                  {{"fault_id", "p"}, {"kind", "rank_pause"}, {"params", {{"rank", 2}}}}),
      "test");
  ASSERT_TRUE(paused["ok"].get<bool>()) << paused.dump();
  EXPECT_EQ(paused["target"], "rank 2 (pid 1234)");
  EXPECT_TRUE(
      ranks.Handle(MakeRequest("revert", 2, {{"fault_id", "p"}}), "test")["ok"].get<bool>());
}

TEST_F(AgentServiceTest, AFaultPastItsMaxDurationIsRevertedByTheAgentItself) {
  Json reply = Call("apply", {{"fault_id", "slow"},
                              {"kind", "link_rate"},
                              {"max_duration_ms", 2000},
                              {"params", {{"interface", "fab0"}, {"rate", "100mbit"}}}});
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  std::vector<Json> pushed;
  service_->set_push([&](Json m) { pushed.push_back(m); });
  clock_.Advance(std::chrono::milliseconds(1990));
  service_->Tick();
  EXPECT_EQ(kernel_.ifaces["fab0"].qdisc_kind, "tbf");
  clock_.Advance(std::chrono::milliseconds(20));
  service_->Tick();
  EXPECT_EQ(kernel_.ifaces["fab0"].qdisc_kind, "noqueue");
  EXPECT_EQ(service_->active_faults(), 0u);
  ASSERT_EQ(pushed.size(), 1u);
  EXPECT_EQ(pushed[0]["type"], "fault_expired");
  EXPECT_EQ(pushed[0]["fault_id"], "slow");
  EXPECT_TRUE(Journal((dir_ / "journal.jsonl").string()).Pending()->empty());
}

TEST_F(AgentServiceTest, AuditLogRecordsWhoWhatAndResult) {
  Call("lease", {{"ttl_ms", 0}});  // the fixture's lease, released
  const Caller ctl{.peer = "198.19.0.254:5000", .subject = "CN=fdrill-controller"};
  auto as_ctl = [&](const std::string& type, Json body) {
    return service_->Handle(MakeRequest(type, ++id_, std::move(body)), ctl);
  };
  ASSERT_TRUE(as_ctl("lease", {{"ttl_ms", 1000}, {"drill", "d1"}})["ok"].get<bool>());
  as_ctl("apply", {{"fault_id", "cut"},
                   {"kind", "link_rate"},
                   {"drill", "d1"},
                   {"params", {{"interface", "mgmt0"}, {"rate", "1gbit"}}}});
  as_ctl("lease", {{"ttl_ms", 1000}, {"drill", "d1"}});  // a renewal: not audited
  std::vector<Json> lines = ReadJsonLines(dir_ / "audit.jsonl");
  // The fixture's lease and its release, ctl's lease, the apply.
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2]["type"], "lease");
  EXPECT_EQ(lines[3]["peer"], "198.19.0.254:5000");
  EXPECT_EQ(lines[3]["subject"], "CN=fdrill-controller");
  EXPECT_EQ(lines[3]["type"], "apply");
  EXPECT_EQ(lines[3]["fault_id"], "cut");
  EXPECT_NE(lines[3]["result"].get<std::string>().find("management path"), std::string::npos);
  EXPECT_GT(lines[0]["wall_ns"].get<int64_t>(), 0);
}

TEST_F(AgentServiceTest, SnapshotReportsLinksAndQdiscs) {
  Json snap = Call("snapshot");
  ASSERT_TRUE(snap["ok"].get<bool>());
  bool saw_fab0 = false;
  for (const auto& l : snap["links"]) {
    if (l["name"] == "fab0") {
      saw_fab0 = true;
      EXPECT_TRUE(l["admin_up"].get<bool>());
      EXPECT_EQ(l["qdisc"], "noqueue");
    }
  }
  EXPECT_TRUE(saw_fab0);
}

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

// A real cluster's run directory: created open to the ranks (they run as
// the operator), removed at the end — only the one the agent watches.
TEST_F(AgentServiceTest, RunDirectoryIsOpenToRanksAndRemovedOnlyWhenItIsTheWatchedOne) {
  const auto run = dir_ / "fdrill-12345";
  Json started = Call("workload_start", {{"metrics_dir", run.string()}});
  ASSERT_TRUE(started["ok"].get<bool>()) << started.dump();
  const auto perms = std::filesystem::status(run).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::others_write, std::filesystem::perms::others_write);
  EXPECT_EQ(perms & std::filesystem::perms::sticky_bit, std::filesystem::perms::sticky_bit);
  std::ofstream(run / "rank-0.jsonl") << "{}\n";

  Json other = Call("run_dir_remove", {{"dir", dir_.string()}});
  EXPECT_FALSE(other["ok"].get<bool>());
  EXPECT_NE(other["error"].get<std::string>().find("not the run directory this agent watches (" +
                                                   run.string() + ")"),
            std::string::npos)
      << other.dump();
  EXPECT_TRUE(std::filesystem::exists(dir_ / "journal.jsonl") || std::filesystem::exists(dir_));

  Json removed = Call("run_dir_remove", {{"dir", run.string()}});
  ASSERT_TRUE(removed["ok"].get<bool>()) << removed.dump();
  EXPECT_EQ(removed["removed"], 2);  // the directory and the rank's file
  EXPECT_FALSE(std::filesystem::exists(run));
  // Watched no longer: a second request is refused, nothing else touched.
  EXPECT_FALSE(Call("run_dir_remove", {{"dir", run.string()}})["ok"].get<bool>());
  EXPECT_TRUE(std::filesystem::exists(dir_));
}

// Issue 25: the server calls PushMetrics when a file in metrics_dir()
// changes; the records go out then, not at the next 20 ms tail.
TEST_F(AgentServiceTest, PushMetricsSendsTheNewRecordsAtOnce) {
  std::vector<Json> pushes;
  service_->set_push([&](Json msg) { pushes.push_back(std::move(msg)); });
  const auto run = dir_ / "fdrill-run";
  ASSERT_TRUE(Call("workload_start", {{"metrics_dir", run.string()}})["ok"].get<bool>());
  EXPECT_EQ(service_->metrics_dir(), run.string());
  service_->PushMetrics();  // nothing written yet: nothing pushed
  EXPECT_TRUE(pushes.empty());
  std::ofstream(run / "rank-0.jsonl") << R"({"rank":0,"iter":0})"
                                      << "\n";
  service_->PushMetrics();  // the fake clock has not moved: no tail is due
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0]["type"], "metrics");
  ASSERT_EQ(pushes[0]["records"].size(), 1u);
  EXPECT_EQ(pushes[0]["records"][0]["iter"], 0);
}

}  // namespace
}  // namespace fdrill
