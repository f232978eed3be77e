// The agent's no-op host backend (`fdrill-agent --fake-host`): everything
// above the Host seam is the real agent — wire, TLS, journal (fsynced), audit
// log, lease, max-duration, counters push — but the machine below it is a
// model. Faults are recorded, never applied: nothing on this machine changes.
// It exists to load the controller with many agents on one box (bench/
// fanout_bench: 10,000 agents on 127.x.y.z) and to try drills without root.
//
// FakeHostKernel plays `ip` and `tc` for three interfaces, lo, mgmt0 and
// fab0: it keeps each one's admin state, root qdisc and neighbour entries
// (none at start; `ip neigh replace` adds one, a down flushes them all, as
// the kernel does), answers the JSON
// queries the network injectors make (so Verify sees the fault "active" and
// then reverted), answers the counters sample with zeros, and routes every
// address over mgmt0 (`ip -j route get`). FakeHostSysFs
// (below) answers the inventory. iptables-save
// prints nothing of ours. Any other command succeeds with empty output and
// is only recorded. Faults on processes find none (an empty process table
// that refuses to spawn), so cpu_hog and mem_pressure fail to apply.
//
// FakeHostNetStack (below) reads the same model as structs, as the real
// agent's NetlinkNetStack reads the kernel's, and makes its changes through
// FakeHostKernel::Run with each change's iproute2 command, so recorded()
// shows them as before. The fake machine's agents use it; the JSON answers
// stay for what still asks `ip` and `tc` (tests, the inventory's probes).
//
// Single-threaded, like the AgentService that owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "common/host/host.h"
#include "common/host/net_stack.h"
#include "common/host/processes.h"

namespace fdrill {

class FakeHostKernel final : public ProcessRunner {
 public:
  struct Iface {
    bool up = true;
    std::string qdisc_kind = "noqueue";
    std::string qdisc_handle = "0:";
    uint64_t rate_bytes = 0;  // tbf rate, bytes/s
    uint64_t burst = 0;
    struct Neighbour {
      std::string dst, lladdr;
      bool permanent = false;  // else STALE
    };
    std::vector<Neighbour> neighbours;  // `ip -j neigh show dev IF`
  };

  FakeHostKernel();

  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration timeout) override;

  // Commands that would have changed the machine (not the queries), in
  // order; the newest kMaxRecorded are kept, mutations() counts them all.
  const std::deque<std::vector<std::string>>& recorded() const { return recorded_; }
  uint64_t mutations() const { return mutations_; }
  const std::map<std::string, Iface>& ifaces() const { return ifaces_; }
  // A netdev appears on the machine (a hot-plugged NIC, one made by hand
  // mid-drill), under any name the kernel allows: bytes that are not UTF-8
  // included. The agent fuzzer uses it.
  void AddInterface(const std::string& name) { ifaces_.emplace(name, Iface{}); }

  static constexpr size_t kMaxRecorded = 64;  // bounded: 10,000 of these live in one process

 private:
  void Record(const std::vector<std::string>& argv);
  std::map<std::string, Iface> ifaces_;
  std::deque<std::vector<std::string>> recorded_;
  uint64_t mutations_ = 0;
};

// The model's network state through the NetStack seam: what the
// iproute2 stack would read from FakeHostKernel's JSON answers, without
// printing and parsing it (at 10,000 fake agents in one process that was a
// quarter of the fleet's CPU: docs/performance.md).
class FakeHostNetStack final : public NetStack {
 public:
  explicit FakeHostNetStack(FakeHostKernel& kernel) : kernel_(kernel) {}
  Result<std::vector<LinkState>> Links() override;
  Result<std::vector<Qdisc>> Qdiscs(const std::string& ifname) override;
  // The model keeps no htb classes or filters: none.
  Result<std::vector<HtbClass>> HtbClasses(const std::string&) override {
    return std::vector<HtbClass>{};
  }
  Result<std::vector<U32Filter>> U32Filters(const std::string&) override {
    return std::vector<U32Filter>{};
  }
  Result<std::vector<RootQdiscCounters>> RootCounters() override;
  // Every address over mgmt0; none held here (FakeHostKernel's routes).
  Result<std::string> RouteDevice(const std::string&) override { return std::string("mgmt0"); }
  Result<std::vector<std::string>> AddressDevices(const std::string&) override {
    return std::vector<std::string>{};
  }
  Result<std::vector<Neighbour>> Neighbours(const std::string& ifname) override;
  Status Apply(const NetChange& change) override;

 private:
  FakeHostKernel& kernel_;
};

// No processes: rank faults find nothing to signal, helpers cannot start.
class FakeHostProcesses final : public ProcessTable {
 public:
  Result<std::vector<int>> Pids() override { return std::vector<int>{}; }
  Result<ProcInfo> Inspect(int pid) override {
    return NotFound("fake host: no process " + std::to_string(pid));
  }
  Result<ProcInfo> Stat(int pid) override { return Inspect(pid); }
  int OwnPid() override { return 1; }
  std::string OwnNetNs() override { return "net:[0]"; }
  Status Signal(int pid, int) override {
    return NotFound("fake host: no process " + std::to_string(pid));
  }
  Result<int> Spawn(const std::vector<std::string>& argv) override {
    return FailedPrecondition("fake host: does not start processes (" + JoinArgv(argv) + ")");
  }
  void Reap(int) override {}
};

// A read-only model of the sysfs an inventory reads (agents/inventory.h):
// /proc/net/dev with every interface of the kernel model at zero (the
// counters sample), one RoCE HCA mlx5_0 (port 1 ACTIVE, 100 Gb/sec, Ethernet, PCI function of
// fab0, NUMA node 0, its port counters all zero), the netdevs mgmt0
// (10 Gb/s) and fab0 (100 Gb/s), one NUMA node with CPUs 0-7. A netdev's
// operstate follows the kernel model (a link_down fault shows). Nothing can
// be written: the cgroup faults fail to capture; the IB port faults find the
// port but nothing changes it, so they never verify. No NVML at all.
class FakeHostSysFs final : public SysFs {
 public:
  explicit FakeHostSysFs(const FakeHostKernel& kernel) : kernel_(kernel) {}
  Result<std::string> Read(const std::string& path) override;
  Status Write(const std::string& path, const std::string&) override {
    return FailedPrecondition("fake host: cannot write " + path);
  }
  bool Exists(const std::string& path) override;
  Status MakeDir(const std::string& path) override {
    return FailedPrecondition("fake host: cannot mkdir " + path);
  }
  Status RemoveDir(const std::string&) override { return Status::Ok(); }
  Status RemoveFile(const std::string&) override { return Status::Ok(); }
  Result<std::vector<std::string>> List(const std::string& dir) override;

 private:
  const FakeHostKernel& kernel_;
};

// One agent's fake machine; Host borrows from it, so it must outlive the
// AgentService built on host().
struct FakeHost {
  FakeHostKernel kernel;
  FakeHostSysFs sysfs{kernel};
  FakeHostProcesses procs;
  FakeHostNetStack net{kernel};
  Host host() {
    Host h{&kernel, &sysfs, &procs, ""};
    h.net = &net;
    return h;
  }
};

}  // namespace fdrill
