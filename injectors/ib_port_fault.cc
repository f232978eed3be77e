#include "injectors/ib_port_fault.h"

#include <cctype>

namespace fdrill {

// ---- IbPortToggle ----

std::vector<std::string> IbPortToggle::Argv(bool enable) const {
  return IbPortStateArgv(port_, IbLidArg(port_, lid_), {enable ? "enable" : "disable"});
}

Status IbPortToggle::Capture() {
  auto status = ReadIbPortStatus(host_.sysfs, port_);
  if (!status.ok()) return status.status().Annotate(kind_);
  if (status->phys == kIbPhysDisabled) {
    return FailedPrecondition(Who() + ": the port is already disabled (phys_state " +
                              status->phys_text +
                              "); enabling it afterwards would not restore what was found");
  }
  auto resolved = ResolveIbLid(host_.sysfs, port_);
  if (!resolved.ok()) return resolved.status().Annotate(Who());
  lid_ = *resolved;
  prior_state_ = status->state;
  prior_text_ = status->state_text;
  return Status::Ok();
}

void IbPortToggle::Load(const Json& saved) {
  lid_ = saved.value("lid", int64_t{0});
  prior_state_ = saved.value("prior_state", kIbStateActive);
  prior_text_ = saved.value("prior_state_text", std::string("4: ACTIVE"));
}

Status IbPortToggle::Set(bool enabled) {
  if (!lid_)
    return FailedPrecondition(Who() + ": Capture must run before Apply (the LID is not known)");
  auto r = RunChecked(*host_.runner, Argv(enabled));
  return r.ok() ? Status::Ok() : r.status().Annotate(Who());
}

Status IbPortToggle::Expect(bool enabled, const std::string& /*why*/) {
  const bool disabled = !enabled;
  auto status = ReadIbPortStatus(host_.sysfs, port_);
  if (!status.ok()) return status.status().Annotate(kind_);
  if ((status->phys == kIbPhysDisabled) != disabled) {
    return FailedPrecondition(Who() + ": phys_state is " + status->phys_text + ", expected " +
                              (disabled ? "3: Disabled" : "not Disabled"));
  }
  return Status::Ok();
}

Status IbPortToggle::Restore() {
  if (!lid_) return Status::Ok();  // never captured, so never applied
  auto status = ReadIbPortStatus(host_.sysfs, port_);
  if (!status.ok())
    return status.status().code() == StatusCode::kNotFound ? Status::Ok() : status.status();
  if (status->phys != kIbPhysDisabled) return Status::Ok();  // not ours to touch: retraining or up
  return Set(true);
}

Status IbPortToggle::VerifyRestored() {
  auto status = ReadIbPortStatus(host_.sysfs, port_);
  if (!status.ok()) return status.status().Annotate(kind_);
  if (status->phys == kIbPhysDisabled)
    return FailedPrecondition(Who() + ": the port is still disabled");
  if (status->state != prior_state_) {
    return FailedPrecondition(Who() + ": port state is " + status->state_text + " (phys_state " +
                              status->phys_text + "), expected " + prior_text_ +
                              " as found; after enable the subnet manager must bring it back");
  }
  return Status::Ok();
}

// ---- IbLinkDowngrade ----

const std::map<std::string, std::string>& IbEnabledFieldOps() {
  static const std::map<std::string, std::string> kOps = {{"LinkWidthEnabled", "width"},
                                                          {"LinkSpeedEnabled", "speed"},
                                                          {"LinkSpeedExtEnabled", "espeed"}};
  return kOps;
}

std::vector<std::string> IbLinkDowngrade::SetArgs(const Masks& masks) {
  std::vector<std::string> args;
  for (const auto& [field, value] : masks) {
    args.push_back(IbEnabledFieldOps().at(field));
    args.push_back(std::to_string(value));
  }
  return args;
}

bool IbLinkDowngrade::Matches(const IbPortInfo& info, const Masks& want) {
  for (const auto& [field, value] : want) {
    int64_t got = info.Get(field);
    // 30 disables extended speeds on a Set; a Get may read it back as 30 or 0 [I].
    if (field == "LinkSpeedExtEnabled" && value == 30 && got == 0) continue;
    if (got != value) return false;
  }
  return true;
}

Status IbLinkDowngrade::RunOp(const std::vector<std::string>& op) {
  auto r = RunChecked(*host_.runner, IbPortStateArgv(port_, Lid(), op));
  return r.ok() ? Status::Ok() : r.status().Annotate(Who());
}

Status IbLinkDowngrade::ExpectMasks(const Masks& masks, const std::string& which) {
  auto info = QueryIbPort(*host_.runner, port_, lid_);
  if (!info.ok()) return info.status().Annotate(Who());
  if (!Matches(*info, masks)) {
    return FailedPrecondition(Who() + ": PortInfo does not show the " + which + " masks (" +
                              JoinArgv(SetArgs(masks)) + ")");
  }
  return Status::Ok();
}

Status IbLinkDowngrade::Capture() {
  auto status = ReadIbPortStatus(host_.sysfs, port_);
  if (!status.ok()) return status.status().Annotate(kind_);
  if (status->state != kIbStateActive || status->phys != kIbPhysLinkUp) {
    return FailedPrecondition(
        Who() + ": port is " + status->state_text + " / " + status->phys_text +
        "; a downgrade needs an ACTIVE port (its rate is what Revert restores)");
  }
  auto resolved = ResolveIbLid(host_.sysfs, port_);
  if (!resolved.ok()) return resolved.status().Annotate(Who());
  const int64_t lid = *resolved;
  auto info = QueryIbPort(*host_.runner, port_, lid);
  if (!info.ok()) return info.status().Annotate(Who());
  auto rate = ParseIbRate(status->rate);
  if (!rate.ok()) return rate.status().Annotate(Who());
  auto want = Downgrade(*info, *rate);
  if (!want.ok()) return want.status();
  Masks prior;
  for (const auto& [field, _] : *want) {
    if (!info->Has(field))
      return Unsupported(Who() + ": ibportstate shows no " + field + " for this port");
    if (info->Get(field) == 0) {
      return FailedPrecondition(Who() + ": " + field +
                                " reads 0 (\"no state change\"), which cannot be written back");
    }
    prior[field] = info->Get(field);
  }
  lid_ = lid;
  prior_ = std::move(prior);
  want_ = std::move(*want);
  prior_rate_ = status->rate;
  prior_state_ = status->state;
  return Status::Ok();
}

Json IbLinkDowngrade::Saved() const {
  return {{"lid", lid_},
          {"prior", prior_},
          {"want", want_},
          {"prior_rate", prior_rate_},
          {"prior_state", prior_state_}};
}

Status IbLinkDowngrade::Load(const Json& saved) {
  lid_ = saved.value("lid", int64_t{0});
  prior_ = saved.value("prior", Masks{});
  want_ = saved.value("want", Masks{});
  prior_rate_ = saved.value("prior_rate", std::string());
  prior_state_ = saved.value("prior_state", kIbStateActive);
  for (const auto& [field, _] : prior_) {
    if (!IbEnabledFieldOps().count(field))
      return InvalidArgument(Who() + ": journal names unknown field " + field);
  }
  return Status::Ok();
}

Status IbLinkDowngrade::Apply() {
  if (!lid_ || want_.empty()) return FailedPrecondition(Who() + ": Capture must run before Apply");
  if (auto s = RunOp(SetArgs(want_)); !s.ok()) return s;
  return RunOp({"reset"});
}

Status IbLinkDowngrade::Verify() {
  if (auto s = ExpectMasks(want_, "written"); !s.ok()) return s;
  auto status = ReadIbPortStatus(host_.sysfs, port_);
  if (!status.ok()) return status.status().Annotate(kind_);
  if (status->phys != kIbPhysLinkUp) {
    return FailedPrecondition(Who() + ": link is " + status->phys_text + ", still retraining to " +
                              target_);
  }
  auto rate = ParseIbRate(status->rate);
  if (!rate.ok()) return rate.status().Annotate(Who());
  return InForce(*rate);
}

Status IbLinkDowngrade::Revert() {
  if (!lid_ || prior_.empty()) return Status::Ok();  // never captured, so never applied
  auto status = ReadIbPortStatus(host_.sysfs, port_);
  if (!status.ok())
    return status.status().code() == StatusCode::kNotFound ? Status::Ok() : status.status();
  auto info = QueryIbPort(*host_.runner, port_, lid_);
  if (!info.ok()) return info.status().Annotate(Who());
  if (!Matches(*info, prior_)) {
    if (auto s = RunOp(SetArgs(prior_)); !s.ok()) return s;
  }
  // Retrain only a link that settled somewhere other than where it was found:
  // one still training will pick up the prior masks by itself.
  if (status->phys == kIbPhysLinkUp && status->rate != prior_rate_) return RunOp({"reset"});
  return Status::Ok();
}

Status IbLinkDowngrade::VerifyReverted() {
  if (!lid_ || prior_.empty()) return Status::Ok();
  if (auto s = ExpectMasks(prior_, "prior"); !s.ok()) return s;
  auto status = ReadIbPortStatus(host_.sysfs, port_);
  if (!status.ok()) return status.status().Annotate(kind_);
  if (status->rate != prior_rate_ || status->state != prior_state_) {
    return FailedPrecondition(
        Who() + ": port is " + status->state_text + " at " + status->rate + ", expected state " +
        std::to_string(prior_state_) + " at " + prior_rate_ +
        " as found (the link retrains, then the subnet manager makes it ACTIVE)");
  }
  return Status::Ok();
}

std::vector<std::string> IbLinkDowngrade::Mechanism() const {
  std::vector<std::string> set =
      want_.empty()
          ? std::vector<std::string>{"width|speed|espeed", "<enabled mask up to " + target_ + ">"}
          : SetArgs(want_);
  std::vector<std::string> back =
      prior_.empty()
          ? std::vector<std::string>{"width|speed|espeed", "<prior enabled mask from query>"}
          : SetArgs(prior_);
  return {"capture: " + JoinArgv(IbPortStateArgv(port_, Lid(), {"query"})),
          "apply: " + JoinArgv(IbPortStateArgv(port_, Lid(), set)) + "; then " +
              JoinArgv(IbPortStateArgv(port_, Lid(), {"reset"})),
          "revert: " + JoinArgv(IbPortStateArgv(port_, Lid(), back)) + "; then " +
              JoinArgv(IbPortStateArgv(port_, Lid(), {"reset"}))};
}

Result<IbDowngradeParams> ReadIbDowngradeParams(const Json& params, const std::string& key) {
  ParamReader p(params);
  auto port = ReadIbPortParams(p, params);
  if (!port.ok()) return port.status();
  auto given = p.String(key);
  if (!given.ok()) return given.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  std::string lower = *given;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return IbDowngradeParams{std::move(*port), *given, lower};
}

// ---- probe ----

Status ProbeIbPort(const Json& params, Host host) {
  std::string root = "/sys/class/infiniband";
  if (params.is_object() && params.contains("sysfs_root") && params["sysfs_root"].is_string()) {
    root = params["sysfs_root"].get<std::string>();
  }
  if (!host.sysfs || !host.sysfs->Exists(root)) {
    return Unsupported("ib_port: no InfiniBand devices here (" + root + " does not exist)");
  }
  if (params.is_object() && params.contains("device") && params["device"].is_string()) {
    IbPort port;
    port.root = root;
    port.device = params["device"].get<std::string>();
    if (params.contains("port") && params["port"].is_number_integer())
      port.port = params["port"].get<int64_t>();
    if (!host.sysfs->Exists(port.Dir())) {
      return NotFound("ib_port: no InfiniBand port " + port.Name() + " here (" + port.Dir() +
                      " does not exist)");
    }
    auto layer = host.sysfs->Read(port.Dir() + "/link_layer");
    if (layer.ok() && layer->rfind("Ethernet", 0) == 0) {
      return Unsupported(
          "ib_port: " + port.Name() +
          " is a RoCE port (link_layer Ethernet); ibportstate acts on InfiniBand ports, "
          "use link_down or link_flap on its netdev");
    }
  }
  auto r = host.runner->Run({"ibportstate", "-V"}, std::chrono::seconds(5));
  if (!r.ok()) {
    if (IsProgramMissing(r.status())) {
      return Unsupported("ib_port needs ibportstate (infiniband-diags): " + r.status().message());
    }
    return r.status().Annotate("ib_port");
  }
  return Status::Ok();
}

}  // namespace fdrill
