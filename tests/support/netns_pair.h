// What the e2e tests of the network injectors share: two network namespaces
// of the test's own, joined by a veth pair, and ways to act inside one.
//
// NetnsPair      PREFIX-<pid>a and PREFIX-<pid>b (never the fabric's
//                fdrill-*/fdm-*; each test file has its own PREFIX), veth
//                fab0 <-> fab0, 198.18.200.1/24 and .2/24, lo up in both.
//                The destructor deletes both namespaces whatever happened;
//                Create first deletes any a crashed run with this pid left.
// NamespaceRunner runs argv inside one namespace (`ip netns exec NS argv`),
//                as an agent inside an emulated node would. It resolves the
//                program first, so a missing one fails with ProgramMissing
//                like RealProcessRunner — `ip netns exec` itself would only
//                exit 1 with "exec of ... failed". `hidden` programs are
//                missing on purpose: a node without nft, say.
// NamespaceSysFs reads files as a process inside the namespace sees them
//                (/proc/net is per namespace). Read-only.
// Needs root. Not thread-safe.
#pragma once

#include <netinet/in.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/host/host.h"
#include "common/host/real_process_runner.h"

namespace fdrill {

class NamespaceRunner final : public ProcessRunner {
 public:
  explicit NamespaceRunner(std::string ns, std::set<std::string> hidden = {})
      : ns_(std::move(ns)), hidden_(std::move(hidden)) {}
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration timeout) override;
  // Whether Run would find `program` (installed here and not hidden).
  bool Has(const std::string& program) const;

 private:
  std::string ns_;
  std::set<std::string> hidden_;
  RealProcessRunner real_;
};

class NamespaceSysFs final : public SysFs {
 public:
  explicit NamespaceSysFs(ProcessRunner* runner) : runner_(runner) {}
  Result<std::string> Read(const std::string& path) override;
  Status Write(const std::string& path, const std::string&) override { return ReadOnly(path); }
  bool Exists(const std::string& path) override;
  Status MakeDir(const std::string& path) override { return ReadOnly(path); }
  Status RemoveDir(const std::string& path) override { return ReadOnly(path); }
  Status RemoveFile(const std::string& path) override { return ReadOnly(path); }
  Result<std::vector<std::string>> List(const std::string& dir) override {
    return Unsupported("NamespaceSysFs does not list directories: " + dir);
  }

 private:
  static Status ReadOnly(const std::string& path) {
    return FailedPrecondition("NamespaceSysFs is read-only: " + path);
  }
  ProcessRunner* runner_;
};

class NetnsPair {
 public:
  NetnsPair() = default;
  NetnsPair(const NetnsPair&) = delete;
  NetnsPair& operator=(const NetnsPair&) = delete;
  ~NetnsPair() { Delete(); }

  Status Create(const std::string& prefix);
  void Delete();
  const std::string& a() const { return a_; }
  const std::string& b() const { return b_; }

  static constexpr char kAddressA[] = "198.18.200.1";
  static constexpr char kAddressB[] = "198.18.200.2";

 private:
  void RemoveNamespaces();  // ip netns del of a_ and b_, whatever exists

  RealProcessRunner real_;
  std::string a_, b_;
};

// setns(2) of the calling thread into /run/netns/NS.
bool EnterNamespace(const std::string& ns);

// Runs fn on a thread that has entered network namespace `ns`; `fn` returns
// a Status (or Result), and entering failing reads as Internal.
template <typename Fn>
auto InNamespace(const std::string& ns, Fn fn) -> decltype(fn()) {
  decltype(fn()) out = Internal("could not enter network namespace " + ns);
  std::thread t([&] {
    if (EnterNamespace(ns)) out = fn();
  });
  t.join();
  return out;
}

// A TCP socket created in namespace `ns` (sockets keep the namespace they
// were made in); -1 on failure. `nonblocking` as SOCK_NONBLOCK.
int SocketIn(const std::string& ns, bool nonblocking = false);
sockaddr_in Ipv4Address(const char* ip, uint16_t port);

// `iptables-save` through `runner` without its comment lines and counters,
// so two snapshots compare equal when the ruleset is the same.
std::string RulesetWithoutCounters(ProcessRunner& runner);

// A revert left `after` as `before`. Without nft (`runner` lacks it: not
// installed, or hidden), a table that iptables' nf_tables backend created
// for the fault stays, empty with ACCEPT base chains (common/host/programs.cc,
// the nft row): then `after` may add exactly such tables and nothing else.
void ExpectRulesetRestored(const NamespaceRunner& runner, const std::string& before,
                           const std::string& after);

}  // namespace fdrill
