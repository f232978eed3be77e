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

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/core/units.h"
#include "common/host/host.h"

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

// What the scenario code needs to know of a kind beyond its scope: it asks
// the kind's row (InjectorInfo below) and never names a kind.
//
// Whether a fault of the kind takes a link (or an IB port) down, and for
// how long: NCCL's IB timeout turns an outage longer than its retries into
// an error (harness/scenario/nccl_ib_timeout.h).
enum class LinkDown {
  kNo,
  kWindow,  // down for the fault's whole window
  kFlap,    // down for params.down (a duration) when given, then up again by itself; without
            // params.down, for the fault's whole window
};

// Where a fault of the kind may act on the emulated fabric's switches
// (switch: in a scenario). A switch's agent acts on its bridge's ports: a
// kind that hooks iptables' OUTPUT or PREROUTING sees a host's own traffic,
// not what a bridge forwards; process, GPU, HCA and NCCL faults have nothing
// to act on there.
enum class OnSwitch {
  kNo,        // on nodes only
  kPort,      // a node's interface, or a switch's port (params.interface)
  kPortOnly,  // a switch's port only
  kWhole,     // a whole switch, every port of it (Scope::kSwitch); no params.interface
};

// What one fault reaches, for the blast radius
// (harness/scenario/blast_radius.cc), where its scope alone does not say.
enum class Radius {
  kScope,   // what its scope says
  kFarHca,  // the link at the far end: params.hca, "<hostname> <device>" (the HCA's
            // NodeDescription, mlx5's default), names the node whose link goes dark, so
            // that node, its device's rail and its leaf there; without it (by guid or
            // switch_lid:port the far node is known only on the fabric) the fault's own
            // node alone
};

// A row of the one list (registry.cc).
struct InjectorInfo {
  const char* name;
  Scope scope;
  unsigned reach;      // Reach bits
  const char* help;    // one line for `fdrill injectors`
  const char* params;  // one line: the keys it takes
  // Params its parser accepts, as JSON text: tests make every kind of the
  // registry from them (tests/injectors/resolved_target_test.cc).
  const char* example;
  FaultFactory make;      // validates params; touches nothing
  CapabilityProbe probe;  // null: no probe, assume capable
  // What the scenario code asks of the kind (above), so it never names one.
  LinkDown link_down = LinkDown::kNo;
  OnSwitch on_switch = OnSwitch::kNo;
  Radius radius = Radius::kScope;
  // An OnSwitch::kPortOnly kind: the kind that does the same on a node's
  // interface, named in the error that refuses it on a node.
  const char* node_kind = nullptr;
};

// The one list of injectors (registry.cc).
const std::vector<InjectorInfo>& Injectors();
const InjectorInfo* FindInjector(std::string_view name);

// Validates kind and params and builds the Fault; touches nothing.
Result<std::unique_ptr<Fault>> MakeFault(std::string_view kind, const Json& params, Host host);
// Rebuilds a Fault from a journal record {"kind", "params", "saved"}.
Result<std::unique_ptr<Fault>> RestoreFault(const Json& record, Host host);

}  // namespace fdrill
