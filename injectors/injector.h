// An injector makes one kind of fault. A Fault is one planned instance of it
// on one node, created from validated params, and driven by the agent:
//
//   Check()    the pre-drill check (`check`, before the workload starts):
//              can this fault be applied here? Defaults to Capture(); a
//              fault whose target only exists once the workload runs (a
//              rank) checks what it can now and selects in Capture.
//   Capture()  reads the exact prior state Apply will change; touches nothing.
//   Saved()    params + captured state as JSON; the agent journals (fsync) it
//              BEFORE Apply, and Restore() rebuilds a Fault from it after a
//              crash so Revert can run.
//   Apply()    changes the machine. May fail part-way.
//   Verify()   observes the kernel's/device's state (never our intent) and
//              says whether the fault is in force.
//   Tick(t)    called every few ms while applied, t = time since Apply; a
//              time-varying fault (a flap) sets its whole state for t, so a
//              repeated Tick is harmless. Finished(t): nothing more to do.
//   Revert()   restores the saved state (not a guessed default). Safe after a
//              failed or partial Apply, safe twice.
//   VerifyReverted()  observes that the saved state is back.
//   ResolvedTarget()  what it acts on as resolved on this node, for the
//              agent's apply reply and the run's summary.json.
//
// Injectors know nothing of scenarios, sockets or each other. Errors about
// params name the key ("params.rate: ...").
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/json.h"
#include "harness/core/result.h"
#include "harness/core/units.h"
#include "harness/host/host.h"

namespace fdrill {

class Fault {
 public:
  virtual ~Fault() = default;
  virtual Status Check() { return Capture(); }
  virtual Status Capture() = 0;
  virtual Json Saved() const = 0;
  // Takes back what Saved() returned (journal replay after a crash).
  virtual Status Load(const Json& saved) = 0;
  virtual Status Apply() = 0;
  virtual Status Verify() = 0;
  virtual Status Tick(Duration /*since_apply*/) { return Status::Ok(); }
  virtual bool Finished(Duration /*since_apply*/) const { return false; }
  // When Tick will next change something (a flap's edge), as time since
  // Apply; nullopt when nothing is scheduled. The agent wakes then, and for
  // a fault only then (and on its 100 ms idle tick): a fault whose Tick
  // changes anything must say when here, or its change waits for the idle
  // tick. An edge is late by a timer's wake-up, not a tick.
  virtual std::optional<Duration> NextChange(Duration /*since_apply*/) const {
    return std::nullopt;
  }
  virtual Status Revert() = 0;
  virtual Status VerifyReverted() = 0;
  // What this fault acts on ("fab0"); the agent refuses its management
  // interface and anything outside its allowlist.
  virtual std::string Target() const = 0;
  // What this fault acts on, resolved on the node and never "": "fab0",
  // "mlx5_0/1", "gpu0", "nvlink" (every GPU's), "rank 2 (pid 1234)",
  // "node". After Capture (or Load) it names what was selected there; before,
  // what the params name. The agent's apply reply carries it as "target".
  virtual std::string ResolvedTarget() const { return Target(); }
  // The exact mechanism, for `fdrill plan`: argv lines Apply and Revert run.
  virtual std::vector<std::string> Mechanism() const = 0;
};

using FaultFactory = Result<std::unique_ptr<Fault>> (*)(const Json& params, Host host);

// What one fault of a kind reaches. The blast radius counts by it
// (harness/scenario/blast_radius.cc), `fdrill injectors` prints it, and the
// README's fault table states it (a test holds the two together).
enum class Scope {
  kInterface,  // a netdev, params.interface: its rail (none given: every netdev of the node)
  kIbPort,     // an InfiniBand HCA port, params.device: that HCA's rail
  kGpu,        // GPUs and their NVLinks (params.gpu, or all): the node's NVLink domain
  kRank,       // workload ranks on the node: the node alone
  kNode,       // the node's CPUs or memory: the node alone
  kNccl,       // what NCCL may use in jobs started on the node: the rails params.ib_hca takes
               // away, and the NVLink domain with p2p_disable or nvls_enable false
  kSwitch,     // a whole switch of the emulated fabric (switch: in a scenario): every node
               // behind its ports, on its rail
};
// "interface", "ib_port", "gpu", "rank", "node", "nccl", "switch".
const char* ScopeName(Scope scope);

// The traffic a fault of a kind acts on, as bits. RDMA (RoCE and
// InfiniBand verbs, what NCCL and UCX move data with) bypasses the kernel's
// qdiscs and netfilter: a tc or iptables fault on a RoCE netdev or on ib0
// shapes the kernel's TCP/IP there (IPoIB included) and never the verbs
// traffic beside it. A netdev taken down takes a RoCE port down with it;
// ib0 (IPoIB) down leaves its InfiniBand port up.
enum Reach : unsigned {
  kReachKernelIp = 1u << 0,  // kernel TCP/IP through the netdev, IPoIB included
  kReachRoce = 1u << 1,      // RoCE RDMA on the port behind the netdev
  kReachIbRdma = 1u << 2,    // InfiniBand RDMA on the HCA port
  kReachNvlink = 1u << 3,    // NVLink between the node's GPUs
  kReachGpu = 1u << 4,       // the GPUs' compute (clocks, power)
  kReachProcess = 1u << 5,   // processes on the node: whatever transport they use
};
// "kernel TCP/IP (incl. IPoIB), RoCE RDMA": the bits in that order, for
// `fdrill injectors` and README.md's fault table.
std::string ReachText(unsigned reach);

// Can this node run the fault? Reads only (runs a tool's version query, reads
// sysfs); Ok, or Unsupported / NotFound saying why not. `params` may be
// empty or partial (`fdrill injectors` has none): a probe checks what it is
// given (an interface, an HCA port) and the tools the mechanism needs.
using CapabilityProbe = Status (*)(const Json& params, Host host);

struct InjectorInfo {
  const char* name;
  Scope scope;
  unsigned reach;                   // Reach bits
  const char* help;                 // one line for `fdrill injectors`
  const char* params;               // one line: the keys it takes
  FaultFactory make;                // validates params; touches nothing
  CapabilityProbe probe = nullptr;  // null: no probe, assume capable
};

// The one list of injectors (registry.cc).
const std::vector<InjectorInfo>& Injectors();
const InjectorInfo* FindInjector(std::string_view name);

// Validates kind and params and builds the Fault; touches nothing.
Result<std::unique_ptr<Fault>> MakeFault(std::string_view kind, const Json& params, Host host);
// Rebuilds a Fault from a journal record {"kind", "params", "saved"}.
Result<std::unique_ptr<Fault>> RestoreFault(const Json& record, Host host);

// Each injector's entry points (one file each).
Result<std::unique_ptr<Fault>> MakeLinkRate(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkFlap(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkLoss(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkDown(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeSwitchDown(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakePortLoss(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkPartition(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeIbPortFlap(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeIbPortDisable(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeIbPortWidth(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeIbPortSpeed(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeIbSwitchPort(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeRankPause(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeRankKill(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeDaemonPause(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeCpuHog(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeMemPressure(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeNvlinkBwMode(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeGpuClockLock(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeGpuPowerCap(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkDelay(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeNcclEnv(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeRoceTcRate(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeRocePfc(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkSpeed(const Json& params, Host host);

// Each injector's capability probe (see CapabilityProbe).
Status ProbeLinkRate(const Json& params, Host host);
Status ProbeLinkFlap(const Json& params, Host host);
Status ProbeLinkLoss(const Json& params, Host host);
Status ProbeLinkDown(const Json& params, Host host);
Status ProbeLinkPartition(const Json& params, Host host);
Status ProbePortLoss(const Json& params, Host host);
Status ProbeIbSwitchPort(const Json& params, Host host);
Status ProbeIbPort(const Json& params, Host host);  // all four ib_port_* kinds
Status ProbeRanks(const Json& params, Host host);   // rank_pause, rank_kill
Status ProbeMemPressure(const Json& params, Host host);
Status ProbeNvlinkBwMode(const Json& params, Host host);
Status ProbeGpuClockLock(const Json& params, Host host);
Status ProbeGpuPowerCap(const Json& params, Host host);
Status ProbeLinkDelay(const Json& params, Host host);
Status ProbeRoceTcRate(const Json& params, Host host);
Status ProbeRocePfc(const Json& params, Host host);
Status ProbeLinkSpeed(const Json& params, Host host);

}  // namespace fdrill
