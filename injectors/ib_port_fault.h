// The two shapes of ib_port_* fault, shared so each injector file holds only
// what is its own.
//
// IbPortToggle (ib_port_disable, ib_port_flap): a local HCA port disabled
// with `ibportstate -C DEV -P PORT LID PORT disable` and enabled again with
// `... enable`, as a Toggle (toggle_fault.h: ib_port_disable's OffFault,
// ib_port_flap's FlapFault). Capture refuses a port already Disabled
// (enabling it would not be a restore) and records the LID (params.lid, else
// sysfs) and the logical state. Disabled is observed in sysfs phys_state
// "3: Disabled". Restore enables only while the port is Disabled, so it is
// safe after a failed Apply and safe twice; VerifyRestored waits for the
// subnet manager to bring the logical state back to what Capture saw
// (usually "4: ACTIVE").
//
// IbLinkDowngrade (ib_port_width, ib_port_speed): writes enabled-mask fields
// of PortInfo (`width`, `speed`, `espeed` MASK), then `reset` so the link
// retrains at the lower width/speed. Capture reads the prior enabled masks
// from `ibportstate ... query` and refuses a port that is not ACTIVE or
// already at or below the target. Verify reads the masks back (query) and the
// negotiated rate (sysfs). Revert writes the prior masks back and resets, and
// resets again only while the link settled at a rate other than the prior
// one, so repeating it converges instead of bouncing the link.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "injectors/ib_port.h"
#include "injectors/injector.h"
#include "injectors/toggle_fault.h"

namespace fdrill {

class IbPortToggle final : public Toggle {
 public:
  IbPortToggle(Host host, IbPort port, std::string kind)
      : host_(host), port_(std::move(port)), kind_(std::move(kind)) {}

  Status Capture() override;
  Json Saved() const override {
    return {{"lid", lid_}, {"prior_state", prior_state_}, {"prior_state_text", prior_text_}};
  }
  void Load(const Json& saved) override;
  Status Set(bool enabled) override;
  // Observes sysfs phys_state: Disabled (off), or anything else (on). The
  // message states the phys_state it expected; `why` is not used.
  Status Expect(bool enabled, const std::string& why) override;
  Status Restore() override;
  Status VerifyRestored() override;
  std::vector<std::string> Argv(bool enable) const override;
  std::string Name() const override { return port_.Name(); }

 private:
  std::string Who() const { return kind_ + " " + port_.Name(); }

  Host host_;
  IbPort port_;
  std::string kind_;
  int64_t lid_ = 0;  // 0: not captured
  int prior_state_ = kIbStateActive;
  std::string prior_text_ = "4: ACTIVE";
};

class IbLinkDowngrade : public Fault {
 public:
  using Masks = std::map<std::string, int64_t>;  // "LinkWidthEnabled" -> 1

  IbLinkDowngrade(Host host, IbPort port, std::string kind, std::string target)
      : host_(host), port_(std::move(port)), kind_(std::move(kind)), target_(std::move(target)) {}

  Status Capture() override;
  Json Saved() const override;
  Status Load(const Json& saved) override;
  Status Apply() override;
  Status Verify() override;
  Status Revert() override;
  Status VerifyReverted() override;
  std::string Target() const override { return port_.Name(); }
  std::vector<std::string> Mechanism() const override;

 protected:
  // The enabled masks to write, from the port's PortInfo and its active
  // rate; refuses a target the port does not support or already runs at.
  virtual Result<Masks> Downgrade(const IbPortInfo& info, const IbRate& active) const = 0;
  // Whether the negotiated rate is within the downgrade.
  virtual Status InForce(const IbRate& active) const = 0;
  std::string Who() const { return kind_ + " " + port_.Name(); }

 private:
  std::string Lid() const { return IbLidArg(port_, lid_); }
  static std::vector<std::string> SetArgs(const Masks& masks);
  static bool Matches(const IbPortInfo& info, const Masks& want);
  Status RunOp(const std::vector<std::string>& op);
  // Queries PortInfo: Ok when it shows `masks`, else FailedPrecondition
  // naming `which` ("written", "prior").
  Status ExpectMasks(const Masks& masks, const std::string& which);

  Host host_;
  IbPort port_;
  std::string kind_;
  std::string target_;  // "1x", "hdr": for messages
  int64_t lid_ = 0;     // 0: not captured
  Masks prior_;         // the fields Apply changes, as found
  Masks want_;          // what Apply writes
  std::string prior_rate_;
  int prior_state_ = kIbStateActive;
};

// The params of an IbLinkDowngrade injector: the port (ReadIbPortParams),
// then params.<key> (required: "width", "speed"), then no other key.
struct IbDowngradeParams {
  IbPort port;
  std::string given;  // params.<key> as written, for messages
  std::string lower;  // the same in lower case, for matching
};
Result<IbDowngradeParams> ReadIbDowngradeParams(const Json& params, const std::string& key);

// PortInfo field -> the ibportstate op that writes it.
const std::map<std::string, std::string>& IbEnabledFieldOps();

}  // namespace fdrill
