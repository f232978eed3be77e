// ib_switch_port: disables the SWITCH port at the far end of another node's
// HCA link, for the fault's whole window or as a flap, the way operators
// take a link down without touching the host: SMPs addressed to the switch
// by LID and port number, sent from this node's HCA port.
//
// Roles: the fault's node is the vantage, whose local port (params.device /
// local_port, default the first ACTIVE InfiniBand port in sysfs) sends the
// SMPs; params.hca (a NodeDescription as ibnetdiscover prints it, with
// params.port), params.guid (a port GUID) or params.switch_lid +
// switch_port names the victim link.
//
// Capture reads, touching nothing: the local port (ACTIVE, and its GUID from
// sysfs gids/0), `ibnetdiscover -p -C DEV -P PORT` (the victim's switch LID
// and port, and this port's own peer), then `smpquery -C DEV -P PORT
// portinfo SWLID SWPORT`. It refuses a switch port that is not
// Active/LinkUp or is already Disabled, a port facing another switch, and
// the switch port this node's own local port hangs off: disabled, it would
// cut the vantage off the fabric, and the SMP to enable it again would have
// to cross that very link (ibsim: the disable's reply is lost, ibportstate
// exits 255 with the port disabled, and every later SMP times out). Saved()
// keeps the resolved local port, switch LID and port, so a journal replay
// addresses the same port even though the victim HCA, its link down, is
// missing from discovery.
//
// Apply: `ibportstate -C DEV -P PORT SWLID SWPORT disable` (PortInfo
// PortPhysicalState=Disabled on the switch port; the victim HCA sees
// phys_state 2: Polling, fault-mechanisms §1.5). Verify: smpquery's
// PhysLinkState is Disabled (ibsim leaves LinkState Active then; by the IB
// port state machine a real port whose link went down is Down: not seen
// here). Revert: `... enable` (Polling) only while the port
// is Disabled, so it is safe after a failed Apply and safe twice, and never
// bounces a link that is training or up. VerifyReverted: LinkState is what
// Capture saw (Active) again; after enable the link retrains and the subnet
// manager must make it Active, so it fails until then and a repeated revert
// enables nothing more (as ib_port_disable). Where the victim runs the
// only subnet manager, the fabric has none while the port is disabled.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "injectors/ib_fabric_discovery.h"
#include "injectors/ib_port.h"
#include "injectors/injector.h"
#include "injectors/toggle_fault.h"

namespace fdrill {

struct IbSwitchPortParams {
  IbLinkSelector victim;  // params.hca + port, params.guid, or params.switch_lid + switch_port
  std::optional<std::string> device;  // the local HCA sending the SMPs
  std::optional<int64_t> local_port;
  std::string root = "/sys/class/infiniband";
  std::optional<FlapSchedule> flap;  // params.down given: a flap
};
// Errors name the key.
Result<IbSwitchPortParams> ReadIbSwitchPortParams(const Json& params);

// The switch port as a Toggle (toggle_fault.h): Set(false) disables it,
// Set(true) enables it.
class IbSwitchPortToggle final : public Toggle {
 public:
  IbSwitchPortToggle(Host host, IbSwitchPortParams params)
      : host_(host), params_(std::move(params)) {}

  Status Capture() override;
  Json Saved() const override;
  void Load(const Json& saved) override;
  Status Set(bool enabled) override;
  // Observes smpquery's PhysLinkState: Disabled (off) or anything else (on).
  Status Expect(bool enabled, const std::string& why) override;
  Status Restore() override;
  Status VerifyRestored() override;
  std::vector<std::string> Argv(bool enable) const override;
  // What the params name: "switch port facing gpu002 mlx5_0 port 1".
  std::string Name() const override;

  // After Capture or Load: "switch 0xb8cef60300a1b3c0 lid 2 port 19 (peer of
  // gpu002 mlx5_0/1)"; before: Name().
  std::string Resolved() const;
  // The commands Capture runs, for Mechanism(): "ibnetdiscover ...; smpquery ...".
  std::string CaptureLine() const;

 private:
  std::string Who() const { return "ib_switch_port " + Resolved(); }
  // The argv words for the local port ("-C", DEV, "-P", PORT) and the
  // switch port (LID, PORT): what Capture resolved, else what the params
  // say, else a placeholder (`fdrill plan`).
  std::vector<std::string> LocalArgs() const;
  std::vector<std::string> SwitchArgs() const;
  Result<IbSmpPortState> QueryState() const;

  Host host_;
  IbSwitchPortParams params_;
  // Captured (or loaded): 0 / empty until then.
  std::string local_device_;
  int64_t local_port_ = 0;
  int64_t switch_lid_ = 0;
  int64_t switch_port_ = 0;
  uint64_t switch_guid_ = 0;
  std::string peer_;  // "gpu002 mlx5_0/1"
  std::string prior_link_state_ = "Active";
};

// The Fault: toggle_fault.h's OffFault (no params.down) or FlapFault over an
// IbSwitchPortToggle, which also answers ResolvedTarget() and adds the
// capture commands to Mechanism().
class IbSwitchPortFault final : public Fault {
 public:
  IbSwitchPortFault(std::unique_ptr<Fault> inner, const IbSwitchPortToggle* toggle)
      : inner_(std::move(inner)), toggle_(toggle) {}

  Status Capture() override { return inner_->Capture(); }
  Json Saved() const override { return inner_->Saved(); }
  Status Load(const Json& saved) override { return inner_->Load(saved); }
  Status Apply() override { return inner_->Apply(); }
  Status Verify() override { return inner_->Verify(); }
  Status Tick(Duration t) override { return inner_->Tick(t); }
  bool Finished(Duration t) const override { return inner_->Finished(t); }
  std::optional<Duration> NextChange(Duration t) const override { return inner_->NextChange(t); }
  Status Revert() override { return inner_->Revert(); }
  Status VerifyReverted() override { return inner_->VerifyReverted(); }
  std::string Target() const override { return inner_->Target(); }
  std::string ResolvedTarget() const override { return toggle_->Resolved(); }
  std::vector<std::string> Mechanism() const override;

 private:
  std::unique_ptr<Fault> inner_;
  const IbSwitchPortToggle* toggle_;  // owned by inner_
};

}  // namespace fdrill
