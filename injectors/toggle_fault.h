// The two shapes of a fault that turns one thing off and on again, shared by
// the netdev and InfiniBand port injectors so each injector file holds only
// its params and its Toggle:
//
//   OffFault   (link_down, ib_port_disable): off for the fault's whole window;
//              the agent's revert at the window's end turns it on.
//   FlapFault  (link_flap, ib_port_flap): off for `down`, then on, `count`
//              times, one flap starting every `period` (FlapSchedule).
//              Tick(t) sets the whole state for time t since Apply, so a late
//              or repeated tick is harmless; a repeat of the last state runs
//              nothing.
//
// Verify observes the thing's state through the Toggle (the kernel's or the
// device's, never our intent); Revert is the Toggle's Restore, safe after a
// failed Apply and safe twice.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "injectors/injector.h"
#include "injectors/params.h"

namespace fdrill {

// Something a fault turns off and on again: an interface's IFF_UP
// (AdminLink, netdev.h), a local HCA port (IbPortToggle, ib_port_fault.h).
class Toggle {
 public:
  virtual ~Toggle() = default;

  // Records the prior state; refuses a thing already off (turning it on
  // afterwards would not be a restore). Touches nothing.
  virtual Status Capture() = 0;
  virtual Json Saved() const = 0;
  virtual void Load(const Json& saved) = 0;
  virtual Status Set(bool on) = 0;
  // Observes the state; `why` names the expectation ("the fault in force")
  // in messages that give one.
  virtual Status Expect(bool on, const std::string& why) = 0;
  // Brings back what Capture saw; safe after a failed Set, safe twice.
  virtual Status Restore() = 0;
  virtual Status VerifyRestored() = 0;
  // The argv Set(on) runs, for Mechanism().
  virtual std::vector<std::string> Argv(bool on) const = 0;
  // What is turned off: "fab0", "mlx5_0/1".
  virtual std::string Name() const = 0;
};

class OffFault final : public Fault {
 public:
  explicit OffFault(std::unique_ptr<Toggle> toggle) : toggle_(std::move(toggle)) {}

  Status Capture() override { return toggle_->Capture(); }
  Json Saved() const override { return toggle_->Saved(); }
  Status Load(const Json& saved) override {
    toggle_->Load(saved);
    return Status::Ok();
  }
  Status Apply() override { return toggle_->Set(false); }
  Status Verify() override { return toggle_->Expect(false, "the fault in force"); }
  Status Revert() override { return toggle_->Restore(); }
  Status VerifyReverted() override { return toggle_->VerifyRestored(); }
  std::string Target() const override { return toggle_->Name(); }
  std::vector<std::string> Mechanism() const override;

 private:
  std::unique_ptr<Toggle> toggle_;
};

// A flap timetable: `count` down windows of `down`, one starting every
// `period`, the first at Apply.
struct FlapSchedule {
  Duration down{};
  int64_t count = 1;
  Duration period{};

  bool WantDown(Duration t) const;
  bool Finished(Duration t) const { return t >= (count - 1) * period + down; }
  // The first edge (down or up) after `t`; nullopt once the last flap is up.
  std::optional<Duration> NextEdge(Duration t) const;
  // "once", "3 times, every 4s".
  std::string Describe() const;
  // InvalidArgument (params.period) unless `what` ("link", "port") comes up
  // between flaps: with more than one flap the period must exceed down.
  Status Check(const std::string& what) const;
};
// Reads params down (required), count (default 1), period (default 2 x
// down); Check() is separate, so each injector keeps its order of checks.
Result<FlapSchedule> ReadFlapSchedule(ParamReader& p);

class FlapFault final : public Fault {
 public:
  FlapFault(std::unique_ptr<Toggle> toggle, FlapSchedule schedule)
      : toggle_(std::move(toggle)), schedule_(schedule) {}

  Status Capture() override { return toggle_->Capture(); }
  Json Saved() const override { return toggle_->Saved(); }
  Status Load(const Json& saved) override {
    toggle_->Load(saved);
    return Status::Ok();
  }
  Status Apply() override { return SetOn(false); }
  Status Tick(Duration t) override { return SetOn(!schedule_.WantDown(t)); }
  bool Finished(Duration t) const override { return schedule_.Finished(t); }
  std::optional<Duration> NextChange(Duration t) const override { return schedule_.NextEdge(t); }
  Status Verify() override { return toggle_->Expect(on_, "where the flap is now"); }
  Status Revert() override;
  Status VerifyReverted() override { return toggle_->VerifyRestored(); }
  std::string Target() const override { return toggle_->Name(); }
  std::vector<std::string> Mechanism() const override;

 private:
  // Sets the whole state for now; a repeat of the last state runs nothing.
  Status SetOn(bool on);

  std::unique_ptr<Toggle> toggle_;
  FlapSchedule schedule_;
  bool on_ = true;  // what we last set
  bool applied_once_ = false;
};

}  // namespace fdrill
