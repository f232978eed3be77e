// End to end on the real kernel: bring up a 3-node fabric under the test's
// own names (never a user's fabric), check what a node is (hostname, TMPDIR,
// reachability over fabric and management, isolation from the root
// namespace), run mpirun across it, tear it down and check nothing is left.
// Needs root. Tests in this binary serialize on a lock, and TearDown removes
// the fabric even when an assertion failed; leftovers of a crashed run (only
// ever under the test's prefixes) are removed by the next run's SetUp.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/host/real_process_runner.h"
#include "fabric/fabric_down.h"
#include "fabric/fabric_state.h"
#include "fabric/fabric_status.h"
#include "fabric/fabric_up.h"
#include "fabric/inventory.h"
#include "fabric/mpirun.h"
#include "fabric/node_enter.h"
#include "fabric/real_node_system.h"
#include "fabric/sshd.h"

namespace fdrill {
namespace {

using ::testing::HasSubstr;

// The default fabric under names and subnets of its own.
FabricLayout TestLayout() {
  FabricLayout layout = FabricLayout::Default();
  layout.state_dir = FDRILL_E2E_FABRIC_DIR;
  layout.netns_prefix = "fdt-";
  layout.root_prefix = "fdtm-";
  layout.mgmt_net = "198.19.250";
  layout.fabric_net = "198.18.1";
  return layout;
}

// Runs fn in a child that has entered `node`; returns fn's result (or 100
// when entering failed).
int RunInNode(const FabricNode& node, const std::function<int()>& fn) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!EnterNode(node).ok()) _exit(100);
    _exit(fn());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int ListenOn(const std::string& ip, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, ip.c_str(), &addr.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  // accept(2) gives up after 10 s (SO_RCVTIMEO applies to it on Linux): a
  // peer that never connects (a broken fabric) fails the test, instead of
  // leaving a child blocked in accept and the test waiting for it.
  timeval accept_timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &accept_timeout, sizeof(accept_timeout));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 4) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Bits per second `to` receives from `from` over to_ip:port when `from`
// sends as fast as it can for `seconds`, measured by the receiver from
// accept to EOF; -1 when either side failed.
double MeasureBitsPerSec(const FabricNode& from, const FabricNode& to, const std::string& to_ip,
                         int port, double seconds) {
  int ready[2], result[2];
  if (pipe(ready) != 0 || pipe(result) != 0) return -1;
  pid_t receiver = fork();
  if (receiver == 0) {
    if (!EnterNode(to).ok()) _exit(100);
    int fd = ListenOn(to_ip, port);
    char ok = fd >= 0 ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1 || fd < 0) _exit(101);
    int c = accept(fd, nullptr, nullptr);
    if (c < 0) _exit(102);
    auto start = std::chrono::steady_clock::now();
    static char buf[1 << 16];
    double bytes = 0;
    for (ssize_t n; (n = read(c, buf, sizeof(buf))) > 0;) bytes += static_cast<double>(n);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double bps = secs > 0 ? bytes * 8 / secs : -1;
    _exit(write(result[1], &bps, sizeof(bps)) == sizeof(bps) ? 0 : 103);
  }
  close(ready[1]);
  close(result[1]);
  char ok = 0;
  bool listening = read(ready[0], &ok, 1) == 1 && ok == 'y';
  close(ready[0]);
  int sent =
      listening
          ? RunInNode(from,
                      [&] {
                        sockaddr_in addr{};
                        addr.sin_family = AF_INET;
                        addr.sin_port = htons(static_cast<uint16_t>(port));
                        inet_pton(AF_INET, to_ip.c_str(), &addr.sin_addr);
                        int fd = socket(AF_INET, SOCK_STREAM, 0);
                        if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
                          return 1;
                        static char buf[1 << 16] = {};
                        auto end = std::chrono::steady_clock::now() +
                                   std::chrono::duration<double>(seconds);
                        while (std::chrono::steady_clock::now() < end)
                          if (write(fd, buf, sizeof(buf)) < 0) return 2;
                        close(fd);
                        return 0;
                      })
          : 1;
  double bps = -1;
  if (read(result[0], &bps, sizeof(bps)) != sizeof(bps)) bps = -1;
  close(result[0]);
  if (sent != 0) kill(receiver, SIGKILL);
  int status = 0;
  waitpid(receiver, &status, 0);
  return sent == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? bps : -1;
}

class FabricE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: creates network namespaces";
    auto ip = runner_.Run({"ip", "-V"}, std::chrono::seconds(5));
    if (!ip.ok()) GTEST_SKIP() << "no `ip` here: " << ip.status().message();
    // One fabric at a time across this binary's processes (ctest -j).
    lock_fd_ = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(lock_fd_, 0);
    ASSERT_EQ(flock(lock_fd_, LOCK_EX), 0);
    auto inv = TakeInventory(TestLayout(), runner_, fs_);
    ASSERT_TRUE(inv.ok()) << inv.status().ToString();
    if (!inv->empty()) {
      auto down = FabricDown(DownOptions{TestLayout()}, Host());
      ASSERT_TRUE(down.ok()) << "leftovers of an earlier test fabric: " << down.status().ToString();
    }
  }

  void TearDown() override {
    if (lock_fd_ < 0) return;
    auto down = FabricDown(DownOptions{TestLayout()}, Host());
    EXPECT_TRUE(down.ok()) << down.status().ToString();
    auto inv = TakeInventory(TestLayout(), runner_, fs_);
    ASSERT_TRUE(inv.ok());
    EXPECT_TRUE(inv->netns.empty()) << inv->netns.front();
    EXPECT_TRUE(inv->root_links.empty()) << inv->root_links.front();
    EXPECT_TRUE(inv->mounts.empty()) << inv->mounts.front();
    EXPECT_FALSE(inv->state_dir_exists);
    close(lock_fd_);
  }

  FabricHost Host() { return FabricHost{&runner_, &fs_, &node_, &clock_}; }

  Result<FabricState> Up(int nodes, const std::string& agent = FDRILL_STAND_IN_AGENT) {
    FabricShape shape;
    shape.nodes = nodes;
    return Up(shape, agent);
  }
  Result<FabricState> Up(const FabricShape& shape,
                         const std::string& agent = FDRILL_STAND_IN_AGENT) {
    UpOptions options;
    options.layout = TestLayout();
    options.shape = shape;
    options.agent_bin = agent;
    return FabricUp(options, Host());
  }

  RealProcessRunner runner_;
  RealSysFs fs_;
  RealNodeSystem node_;
  RealClock clock_;
  int lock_fd_ = -1;
};

TEST_F(FabricE2eTest, NodesHaveTheirOwnHostnameTmpdirAndAgent) {
  auto state = Up(3);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto loaded = LoadFabricState(fs_, FDRILL_E2E_FABRIC_DIR);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->nodes.size(), 3u);

  for (const auto& n : loaded->nodes) {
    EXPECT_TRUE(AgentAlive(fs_, loaded->agent_bin, n.name, n.agent_pid)) << n.name;
    // The agent itself was started inside the node.
    auto where = fs_.Read(n.state_dir + "/where.txt");
    ASSERT_TRUE(where.ok()) << where.status().ToString();
    EXPECT_EQ(*where, "hostname=" + n.name + "\ntmpdir=" + n.tmpdir + "\n");
  }
  const FabricNode& n1 = loaded->nodes[1];
  EXPECT_EQ(RunInNode(n1,
                      [&] {
                        char host[256] = {};
                        gethostname(host, sizeof(host) - 1);
                        const char* tmpdir = getenv("TMPDIR");
                        return std::string(host) == "n1" && tmpdir && n1.tmpdir == tmpdir ? 0 : 1;
                      }),
            0);

  auto status = GetFabricStatus(FDRILL_E2E_FABRIC_DIR, Host());
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  for (const auto& n : status->nodes) {
    EXPECT_TRUE(n.agent_alive) << n.node.name;
    EXPECT_EQ(n.fabric_links, std::vector<std::string>{"UP"}) << n.node.name;
    EXPECT_EQ(n.switch_ports, std::vector<std::string>{"UP"}) << n.node.name;
    EXPECT_EQ(n.mgmt_link, "UP") << n.node.name;
  }
}

TEST_F(FabricE2eTest, FabricConnectsNodesAndOnlyNodesManagementReachesController) {
  auto state = Up(3);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  const FabricNode& n0 = state->nodes[0];
  const FabricNode& n2 = state->nodes[2];

  // n2 listens on its fabric address; n0 connects over the switch, and the
  // connection n2 accepts comes from n0's fabric address.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t listener = fork();
  if (listener == 0) {
    if (!EnterNode(n2).ok()) _exit(100);
    int fd = ListenOn(n2.FabricIp(), 7300);
    char ok = fd >= 0 ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1 || fd < 0) _exit(101);
    sockaddr_in peer{};
    socklen_t len = sizeof(peer);
    int c = accept(fd, reinterpret_cast<sockaddr*>(&peer), &len);
    char ip[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof(ip));
    _exit(c >= 0 && n0.FabricIp() == ip ? 0 : 102);
  }
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  ASSERT_EQ(ok, 'y');
  const int connected = RunInNode(
      n0, [&] { return node_.TcpConnects(n2.FabricIp(), 7300, std::chrono::seconds(2)) ? 0 : 1; });
  EXPECT_EQ(connected, 0);
  if (connected != 0) kill(listener, SIGKILL);  // nobody will come to its accept
  int status = 0;
  waitpid(listener, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  // The root namespace has no address on the fabric (a TCP probe from it
  // proves nothing: some sandboxes answer every SYN on their default route).
  auto root_addrs = RunChecked(runner_, {"ip", "-o", "addr", "show", "to", FabricSubnets(*state)});
  ASSERT_TRUE(root_addrs.ok()) << root_addrs.status().ToString();
  EXPECT_EQ(*root_addrs, "");

  // n0 reaches the controller's address on the management bridge.
  std::string controller_ip = state->controller_addr.substr(0, state->controller_addr.find('/'));
  int fd = ListenOn(controller_ip, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  EXPECT_EQ(RunInNode(n0,
                      [&] {
                        return node_.TcpConnects(controller_ip, ntohs(bound.sin_port),
                                                 std::chrono::seconds(2))
                                   ? 0
                                   : 1;
                      }),
            0);
  close(fd);
}

// 8 nodes x 2 rails x 2 leaves: every rail reaches across its spine, the
// switch ports and the oversubscribed uplinks carry the modelled capacity
// (100 Mbit/s ports, 4 nodes per leaf, 8:1 -> 50 Mbit/s uplinks; unshaped
// veths here carry gigabits), and the nodes' fab* keep the kernel default.
TEST_F(FabricE2eTest, RailsLeavesAndSpineCarryTheModelledCapacity) {
  FabricShape shape;
  shape.nodes = 8;
  shape.rails = 2;
  shape.leaves = 2;
  shape.oversubscription = 8;
  shape.port_rate_bps = 100'000'000;
  auto start = std::chrono::steady_clock::now();
  auto state = Up(shape);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  RecordProperty("fabric_up_8x2x2_ms",
                 static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::steady_clock::now() - start)
                                      .count()));
  const FabricNode& n0 = state->nodes[0];
  const FabricNode& n1 = state->nodes[1];
  const FabricNode& n7 = state->nodes[7];

  auto status = GetFabricStatus(FDRILL_E2E_FABRIC_DIR, Host());
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  for (const auto& n : status->nodes) {
    EXPECT_EQ(n.fabric_links, (std::vector<std::string>{"UP", "UP"})) << n.node.name;
    EXPECT_EQ(n.switch_ports, (std::vector<std::string>{"UP", "UP"})) << n.node.name;
  }
  ASSERT_EQ(status->uplinks.size(), 8u);  // per rail: 2 x up0, 2 x dn
  // Every uplink exists. Its operstate is not asserted: the spines' dn0
  // has read DOWN (NO-CARRIER) on both rails in some runs while traffic
  // crossed it (the measurements below passed) — not understood yet.
  for (const auto& u : status->uplinks) EXPECT_NE(u.state, "missing") << u.port;

  // n0 (leaf 0) to n7 (leaf 1) crosses the spine on each rail; n0 to n1 stays in leaf 0.
  for (int rail = 0; rail < 2; ++rail) {
    const std::string to = n7.fabric[rail].Ip();
    double cross = MeasureBitsPerSec(n0, n7, to, 7310 + rail, 1.5);
    EXPECT_GT(cross, 25e6) << "rail " << rail << " n0 -> n7 over the spine";
    EXPECT_LT(cross, 55e6) << "rail " << rail << " n0 -> n7 over the spine";
  }
  double inside = MeasureBitsPerSec(n0, n1, n1.fabric[1].Ip(), 7312, 1.5);
  EXPECT_GT(inside, 60e6) << "n0 -> n1 inside leaf 0";
  EXPECT_LT(inside, 110e6) << "n0 -> n1 inside leaf 0";

  auto uplink = RunChecked(runner_, {"tc", "-n", "fdt-rail1-leaf0", "qdisc", "show", "dev", "up0"});
  ASSERT_TRUE(uplink.ok()) << uplink.status().ToString();
  EXPECT_THAT(*uplink, HasSubstr("qdisc tbf 1: root"));
  EXPECT_THAT(*uplink, HasSubstr("rate 50Mbit"));
  EXPECT_THAT(*uplink, HasSubstr("qdisc bfifo 10: parent 1:1 limit"));
  for (const auto& port : n0.fabric) {
    auto q = RunChecked(runner_, {"tc", "-n", n0.netns, "qdisc", "show", "dev", port.ifname});
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    EXPECT_THAT(*q, HasSubstr("qdisc noqueue 0: root")) << port.ifname;
  }
}

TEST_F(FabricE2eTest, DownLeavesNothingAndIsIdempotent) {
  auto state = Up(2);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto again = Up(2);
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("fabric already up with 2 nodes"));

  auto down = FabricDown(DownOptions{TestLayout()}, Host());
  ASSERT_TRUE(down.ok()) << down.status().ToString();
  EXPECT_EQ(down->agents_stopped, 3);  // two nodes and the switch
  for (const FabricNode* n : state->AgentHosts())
    EXPECT_FALSE(AgentAlive(fs_, state->agent_bin, n->name, n->agent_pid));
  auto inv = TakeInventory(TestLayout(), runner_, fs_);
  ASSERT_TRUE(inv.ok());
  EXPECT_TRUE(inv->empty());
  auto second = FabricDown(DownOptions{TestLayout()}, Host());
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->found_nothing);
}

TEST_F(FabricE2eTest, UpWhoseAgentDiesRollsBackCompletely) {
  auto state = Up(2, "/bin/false");
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(), HasSubstr("agent on n0"));
  EXPECT_THAT(state.status().message(), HasSubstr("rolled back"));
  auto inv = TakeInventory(TestLayout(), runner_, fs_);
  ASSERT_TRUE(inv.ok());
  EXPECT_TRUE(inv->empty());
}

TEST_F(FabricE2eTest, MpirunRunsOneRankPerNodeThroughFabricRsh) {
  auto mpirun = runner_.Run({"mpirun", "--version"}, std::chrono::seconds(10));
  if (!mpirun.ok()) GTEST_SKIP() << "no mpirun: " << mpirun.status().message();
  auto state = Up(3);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  std::string hostfile = state->nodes[0].tmpdir + "/hostfile";
  ASSERT_TRUE(fs_.Write(hostfile, MpirunHostfile(*state, 1)).ok());

  std::vector<std::string> argv = {FDRILL_TEST_CLI, "fabric", "exec", "n0", "--"};
  for (auto& a : MpirunArgv(*state, 1, FDRILL_TEST_CLI, {FDRILL_MPI_PROBE}, hostfile))
    argv.push_back(a);
  auto run = runner_.Run(argv, std::chrono::seconds(60));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->exit_code, 0) << run->out << run->err;
  for (const auto& n : state->nodes) {
    std::string rank = n.name.substr(1);
    EXPECT_THAT(run->out,
                HasSubstr("rank " + rank + " of 3 on " + n.name + " TMPDIR=" + n.tmpdir + " sum=6"))
        << run->out << run->err;
  }
}

// `up --sshd`: a real OpenSSH sshd in every node. ssh by the fabric's own
// config reaches each node by name (its hostname and TMPDIR there), mpirun
// from the controller's side starts one rank per node over it exactly as on
// a cluster (plm_rsh_agent "ssh -F <config>"), and down stops every sshd and
// whatever its sessions left.
TEST_F(FabricE2eTest, SshdInEveryNodeCarriesSshAndMpirunOverIt) {
  UpOptions options;
  options.layout = TestLayout();
  options.shape.nodes = 3;
  options.agent_bin = FDRILL_STAND_IN_AGENT;
  options.sshd = true;
  ASSERT_TRUE(CheckSshdInstalled(&options).ok()) << "./test.sh installs openssh-server";
  auto state = FabricUp(options, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  const SshFiles files = SshFilesOf(*state);
  for (const auto& n : state->nodes) {
    auto run = runner_.Run({"ssh", "-F", files.ClientConfig(), n.name, "echo $(hostname) $TMPDIR"},
                           std::chrono::seconds(30));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_EQ(run->exit_code, 0) << run->err;
    EXPECT_EQ(run->out, n.name + " " + n.tmpdir + "\n") << run->err;
  }
  auto status = GetFabricStatus(TestLayout().state_dir, Host());
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  for (const auto& n : status->nodes) EXPECT_TRUE(n.sshd_alive) << n.node.name;

  std::string hostfile = files.dir + "/hostfile";
  std::string hosts;
  for (const auto& n : state->nodes) hosts += n.name + " slots=1\n";
  ASSERT_TRUE(fs_.Write(hostfile, hosts).ok());
  const std::string mgmt = TestLayout().mgmt_net + ".0/24";
  auto run = runner_.Run({"mpirun",
                          "--allow-run-as-root",
                          "-np",
                          "3",
                          "--hostfile",
                          hostfile,
                          "--map-by",
                          "ppr:1:node",
                          "--bind-to",
                          "none",
                          "--mca",
                          "plm_rsh_agent",
                          "ssh -F " + files.ClientConfig(),
                          "--mca",
                          "rtc",
                          "^hwloc",
                          "--mca",
                          "pml",
                          "ob1",
                          "--mca",
                          "btl",
                          "self,tcp",
                          "--mca",
                          "btl_tcp_if_include",
                          FabricSubnets(*state),
                          "--mca",
                          "oob_tcp_if_include",
                          mgmt,
                          FDRILL_MPI_PROBE},
                         std::chrono::seconds(60));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->exit_code, 0) << run->out << run->err;
  for (const auto& n : state->nodes) {
    EXPECT_THAT(run->out, HasSubstr("rank " + n.name.substr(1) + " of 3 on " + n.name +
                                    " TMPDIR=" + n.tmpdir + " sum=6"))
        << run->out << run->err;
  }

  auto down = FabricDown(DownOptions{TestLayout()}, Host());
  ASSERT_TRUE(down.ok()) << down.status().ToString();
  EXPECT_EQ(down->sshds_stopped, 3);
  EXPECT_TRUE(FindSshds(fs_, files.SshdConfig()).empty());
}

}  // namespace
}  // namespace fdrill
