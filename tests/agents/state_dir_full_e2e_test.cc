// Issue 48: a full state directory never stops the revert path. On a tiny
// tmpfs (the real kernel's ENOSPC, so root: CI runs as root), the agent's
// start-up sweep reverts what its journal holds even though it cannot
// write that down, then serves with every fault refused ("journal cannot
// be written: …", said in hello and /metrics), and accepts faults again
// once space returns, without a restart. `fdrill panic` on a full disk
// reverts, and its latch holds in memory. On the main branch before the
// issue the sweep failed (the agent exited 2 on every restart, and so did
// --revert-all) and panic reverted nothing.
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "agents/agent_service.h"
#include "tests/agents/test_agent.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_net.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

namespace fs = std::filesystem;

class StateDirFullE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a tmpfs (CI runs as root)";
    dir_ = ScratchPath("fdrill-full-state-");
    fs::create_directories(dir_);
    ASSERT_EQ(mount("tmpfs", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=256k,mode=0700"), 0)
        << std::strerror(errno);
    mounted_ = true;
  }
  void TearDown() override {
    service_.reset();
    if (mounted_) {
      EXPECT_EQ(umount2(dir_.c_str(), MNT_DETACH), 0) << std::strerror(errno);
    }
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void Start() {
    service_ = std::make_unique<AgentService>(TestAgentConfig("n1", dir_), Host{&kernel_, nullptr},
                                              clock_);
  }
  Json Call(const std::string& type, Json body = Json::object()) {
    return service_->Handle(MakeRequest(type, ++id_, std::move(body)), "test");
  }
  Json ApplyRate() {
    return Call("apply", {{"fault_id", "slow"},
                          {"kind", "link_rate"},
                          {"params", {{"interface", "fab0"}, {"rate", "100mbit"}}}});
  }
  // Fills the tmpfs to its last page.
  void Fill() {
    std::ofstream out(dir_ / "filler", std::ios::binary);
    const std::string block(4096, 'x');
    for (int i = 0; i < 1024 && out.write(block.data(), block.size()); ++i) out.flush();
  }
  bool Shaped() { return kernel_.ifaces["fab0"].qdisc_kind == "tbf"; }

  fs::path dir_;
  bool mounted_ = false;
  FakeNetKernel kernel_;
  FakeClock clock_;
  std::unique_ptr<AgentService> service_;
  uint64_t id_ = 0;
};

TEST_F(StateDirFullE2E, TheStartUpSweepRevertsThenFaultsAreRefusedUntilSpaceReturns) {
  Start();
  ASSERT_TRUE(Call("lease", {{"ttl_ms", 60000}})["ok"].get<bool>());
  ASSERT_TRUE(ApplyRate()["ok"].get<bool>());
  Fill();
  service_.reset();  // SIGKILLed with its fault applied and the disk full
  ASSERT_TRUE(Shaped());

  Start();
  auto swept = service_->SweepAtStart();
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(*swept, 1);
  EXPECT_FALSE(Shaped()) << "the sweep left the cap";
  EXPECT_NE(service_->journal_error().find("No space left on device"), std::string::npos)
      << service_->journal_error();
  Json hello = Call("hello");
  EXPECT_TRUE(hello.contains("journal_error")) << hello.dump();
  Json lease = Call("lease", {{"ttl_ms", 60000}});
  EXPECT_FALSE(lease["ok"].get<bool>()) << lease.dump();
  EXPECT_NE(lease["error"].get<std::string>().find("journal"), std::string::npos) << lease.dump();
  EXPECT_FALSE(Shaped());

  fs::remove(dir_ / "filler");  // space returns
  clock_.Advance(std::chrono::milliseconds(1100));
  service_->Tick();
  EXPECT_EQ(service_->journal_error(), "");
  EXPECT_FALSE(Call("hello").contains("journal_error"));
  ASSERT_TRUE(Call("lease", {{"ttl_ms", 60000}})["ok"].get<bool>());
  ASSERT_TRUE(ApplyRate()["ok"].get<bool>());
  EXPECT_TRUE(Shaped());
  ASSERT_TRUE(Call("revert", {{"fault_id", "slow"}})["ok"].get<bool>());
  EXPECT_TRUE(Journal((dir_ / "journal.jsonl").string()).Pending()->empty());
}

TEST_F(StateDirFullE2E, PanicOnAFullStateDirectoryRevertsAndItsLatchHoldsInMemory) {
  Start();
  ASSERT_TRUE(Call("lease", {{"ttl_ms", 60000}})["ok"].get<bool>());
  ASSERT_TRUE(ApplyRate()["ok"].get<bool>());
  Fill();
  Json panic = Call("revert_all", {{"latch", true}, {"reason", "full disk"}});
  ASSERT_TRUE(panic["ok"].get<bool>()) << panic.dump();
  EXPECT_FALSE(Shaped()) << "panic left the cap on a full disk";
  EXPECT_NE(panic.value("latch_error", "").find("cannot write"), std::string::npos) << panic.dump();
  EXPECT_TRUE(service_->panic_latched());
  EXPECT_EQ(Call("lease", {{"ttl_ms", 60000}})["code"], "permission_denied");
}

}  // namespace
}  // namespace fdrill
