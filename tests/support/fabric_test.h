// A test on an emulated fabric of its own: `fdrill fabric up ARGS` before
// it, `fdrill fabric down` after it whatever happened, and none of its
// network namespaces left. The fabric is a named one (FDRILL_FABRIC=e<K>,
// set in this process, so every fdrill it starts means it): K is the first
// slot whose lock (/run/fdrill/e2e-slot-K.lock) no other test holds, so
// tests run side by side (ctest -j) on fabrics of their own and never touch
// a user's default fabric. Needs root (skipped, saying why, otherwise; CI
// runs as root) and refuses to start over a fabric of that name that is
// already up rather than tear down someone's. work_ is the test's scratch
// directory, made empty and removed at the end. A fixture that sets
// named_ = false before BringUp gets the default fabric instead.
//
//   void SetUp() override { BringUp("fdrill-e2e-", {"--nodes", "4"}); }
//   Netns("n1")      the node's namespace ("fdrill.e0-n1")
//   FabricDir()      its state dir ("/run/fdrill/fabric-e0")
//   RootLink("n1")   its management veth in the root namespace ("fde0.n1")
//   MgmtNet()        its management /24's first three octets ("198.19.1")
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/e2e_cli.h"
#include "tests/support/scratch_dir.h"

namespace fdrill::e2e {

class FabricTest : public ::testing::Test {
 protected:
  // A test that calls it and goes on must return when it skipped or failed
  // (IsSkipped() || HasFatalFailure()).
  void BringUp(const std::string& scratch_prefix, const std::vector<std::string>& up_args,
               int timeout_s = 60) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces (CI runs as root)";
    if (!named_) unsetenv("FDRILL_FABRIC");
    if (named_) {
      TakeSlot();
      ASSERT_FALSE(name_.empty()) << "every e2e fabric slot (/run/fdrill/e2e-slot-*.lock) is taken";
    }
    ASSERT_FALSE(std::filesystem::exists(FabricDir() + "/fabric.json"))
        << "an emulated fabric (" << FabricDir()
        << ") is already up; this test will not tear down someone's fabric. Run `"
        << (name_.empty() ? "" : "FDRILL_FABRIC=" + name_ + " ") << "fdrill fabric down` first.";
    work_ = ScratchPath(scratch_prefix);
    std::filesystem::create_directories(work_);
    std::vector<std::string> args = {"fabric", "up"};
    args.insert(args.end(), up_args.begin(), up_args.end());
    auto up = Fdrill(args, timeout_s);
    ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
    up_ = true;
  }

  void TearDown() override {
    if (up_) {
      auto down = Fdrill({"fabric", "down"});
      EXPECT_EQ(down.exit_code, 0) << down.out << down.err;
      EXPECT_EQ(Sh({"ip", "netns", "list"}).find(NetnsPrefix()), std::string::npos)
          << "namespaces left behind";
    }
    if (!work_.empty()) std::filesystem::remove_all(work_);
    if (slot_fd_ >= 0) close(slot_fd_);
  }

  std::string Netns(const std::string& node) const { return NetnsPrefix() + node; }
  std::string NetnsPrefix() const { return name_.empty() ? "fdrill-" : "fdrill." + name_ + "-"; }
  std::string FabricDir() const {
    return name_.empty() ? "/run/fdrill/fabric" : "/run/fdrill/fabric-" + name_;
  }
  std::string RootLink(const std::string& node) const {
    return (name_.empty() ? "fdm-" : "fd" + name_ + ".") + node;
  }
  // From the fabric's fabric.json: "198.19.K".
  std::string MgmtNet() const {
    std::ifstream in(FabricDir() + "/fabric.json");
    const auto state = nlohmann::json::parse(in, nullptr, false);
    if (state.is_discarded() || !state.contains("controller_addr")) return "";
    const std::string addr = state["controller_addr"].get<std::string>();
    return addr.substr(0, addr.rfind('.'));
  }

  // Processes running in this fabric's namespaces whose executable is one
  // of `names` (only those stopped, SIGSTOP'ed or frozen, with
  // stopped_only). Other tests' fabrics, side by side, are not counted.
  int ProcessesInFabric(const std::vector<std::string>& names, bool stopped_only = false) const {
    namespace fs = std::filesystem;
    std::vector<ino_t> ours;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/run/netns", ec)) {
      struct stat st {};
      if (e.path().filename().string().rfind(NetnsPrefix(), 0) == 0 &&
          stat(e.path().c_str(), &st) == 0)
        ours.push_back(st.st_ino);
    }
    int n = 0;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      std::error_code link_ec;
      const std::string exe = fs::read_symlink(e.path() / "exe", link_ec).filename().string();
      if (link_ec || std::find(names.begin(), names.end(), exe) == names.end()) continue;
      struct stat st {};
      if (stat((e.path() / "ns/net").c_str(), &st) != 0 ||
          std::find(ours.begin(), ours.end(), st.st_ino) == ours.end())
        continue;
      std::ifstream stat_file(e.path() / "stat");
      const std::string text((std::istreambuf_iterator<char>(stat_file)),
                             std::istreambuf_iterator<char>());
      const auto close = text.rfind(')');
      const bool stopped =
          close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'T';
      if (!stopped_only || stopped) ++n;
    }
    return n;
  }

  std::filesystem::path work_;
  bool up_ = false;
  // false: the default fabric (/run/fdrill/fabric, fdrill-*), for a test
  // that runs a document's commands as written; its ctest entry holds the
  // fdrill_default_fabric lock (tests/CMakeLists.txt).
  bool named_ = true;

 private:
  // The first free slot's lock, held until TearDown; FDRILL_FABRIC=e<slot>.
  void TakeSlot() {
    std::filesystem::create_directories("/run/fdrill");
    for (int k = 0; k < 16 && name_.empty(); ++k) {
      const std::string lock = "/run/fdrill/e2e-slot-" + std::to_string(k) + ".lock";
      const int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0) continue;
      if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        continue;
      }
      slot_fd_ = fd;
      name_ = "e" + std::to_string(k);
    }
    if (!name_.empty()) setenv("FDRILL_FABRIC", name_.c_str(), 1);
  }

  std::string name_;
  int slot_fd_ = -1;
};

}  // namespace fdrill::e2e
