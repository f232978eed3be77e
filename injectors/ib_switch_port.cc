// ib_switch_port: the contract, the roles and the hardware facts are in
// ib_switch_port.h; tool output formats in ib_fabric_discovery.h.
#include "injectors/ib_switch_port.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "injectors/param_values.h"

namespace fdrill {

namespace {

// Discovery walks the whole fabric: seconds on thousands of nodes.
constexpr auto kDiscoverTimeout = std::chrono::seconds(60);

// Runs an infiniband-diags tool. They print their "iberror: failed: ..."
// line on stdout (ibdiag_common.c iberror() uses printf) and libibmad's
// "ibwarn" lines on stderr, so an error carries both (RunChecked keeps
// stderr only).
Result<std::string> RunIbDiag(ProcessRunner& runner, const std::vector<std::string>& argv,
                              Duration timeout = std::chrono::seconds(10)) {
  auto r = runner.Run(argv, timeout);
  if (!r.ok()) return r.status();
  if (r->exit_code == 0) return std::move(r->out);
  std::string why;
  for (const std::string* text : {&r->out, &r->err}) {
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || (text == &r->out && line.find("iberror:") == std::string::npos)) continue;
      why += (why.empty() ? "" : "; ") + line;
    }
  }
  return FailedPrecondition("`" + JoinArgv(argv) + "` exited " + std::to_string(r->exit_code) +
                            (why.empty() ? "" : ": " + why));
}

std::vector<std::string> SmpQueryArgv(const std::vector<std::string>& local,
                                      const std::vector<std::string>& target) {
  std::vector<std::string> argv = {"smpquery"};
  argv.insert(argv.end(), local.begin(), local.end());
  argv.push_back("portinfo");
  argv.insert(argv.end(), target.begin(), target.end());
  return argv;
}

Result<IbSmpPortState> QuerySwitchPort(ProcessRunner& runner, const std::vector<std::string>& local,
                                       const std::vector<std::string>& target) {
  auto out = RunIbDiag(runner, SmpQueryArgv(local, target));
  if (!out.ok()) return out.status();
  return ParseSmpPortInfo(*out);
}

// "mlx5_10" after "mlx5_9", port "10" after "9".
bool NaturalLess(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    size_t d = s.find_last_not_of("0123456789") + 1;
    return std::pair{s.substr(0, d), d < s.size() ? std::atoll(s.c_str() + d) : -1LL};
  };
  return split(a) < split(b);
}

// The local port the SMPs leave by: params.device + local_port, else the
// first ACTIVE InfiniBand port (of params.device when given).
Result<IbPort> PickLocalIbPort(SysFs* fs, const IbSwitchPortParams& pp) {
  if (!fs) return Internal("no sysfs access given to the IB injector");
  IbPort port;
  port.root = pp.root;
  if (pp.device && pp.local_port) {
    port.device = *pp.device;
    port.port = *pp.local_port;
    auto status = ReadIbPortStatus(fs, port);
    if (!status.ok()) return status.status();
    auto layer = fs->Read(port.Dir() + "/link_layer");
    if (layer.ok() && layer->rfind("Ethernet", 0) == 0) {
      return FailedPrecondition("local port " + port.Name() +
                                " is a RoCE port: SMPs need an InfiniBand port");
    }
    if (status->state != kIbStateActive) {
      return FailedPrecondition("local port " + port.Name() + " is " + status->state_text +
                                "; the SMPs go out of it, so it must be 4: ACTIVE");
    }
    return port;
  }
  auto devices = fs->List(pp.root);
  if (!devices.ok())
    return NotFound("no InfiniBand devices here (" + pp.root + " cannot be listed)");
  std::sort(devices->begin(), devices->end(), NaturalLess);
  std::string seen;
  for (const auto& dev : *devices) {
    if (pp.device && dev != *pp.device) continue;
    auto ports = fs->List(pp.root + "/" + dev + "/ports");
    if (!ports.ok()) continue;
    std::sort(ports->begin(), ports->end(), NaturalLess);
    for (const auto& n : *ports) {
      IbPort candidate{dev, std::atoll(n.c_str()), std::nullopt, pp.root};
      auto layer = fs->Read(candidate.Dir() + "/link_layer");
      auto status = ReadIbPortStatus(fs, candidate);
      std::string what = !status.ok() ? "unreadable" : status->state_text;
      if (layer.ok() && layer->rfind("Ethernet", 0) == 0) what = "RoCE";
      seen += (seen.empty() ? "" : ", ") + candidate.Name() + " " + what;
      if (what == "4: ACTIVE") return candidate;
    }
  }
  if (pp.device && seen.empty())
    return NotFound("params.device: no HCA " + *pp.device + " with ports under " + pp.root);
  return FailedPrecondition("no ACTIVE InfiniBand port here to send the SMPs from (" +
                            (seen.empty() ? std::string("no ports") : seen) +
                            "); give params.device and params.local_port");
}

}  // namespace

// ---- params and probe ----

Result<IbSwitchPortParams> ReadIbSwitchPortParams(const Json& params) {
  ParamReader p(params);
  IbSwitchPortParams out;
  const bool by_hca = p.Has("hca"), by_guid = p.Has("guid");
  const bool by_switch = p.Has("switch_lid") || p.Has("switch_port");
  if (by_hca + by_guid + by_switch > 1) {
    const std::string key = !by_switch            ? "guid"
                            : p.Has("switch_lid") ? "switch_lid"
                                                  : "switch_port";
    return InvalidArgument("params." + key +
                           ": name the victim once: params.hca (+ port), params.guid, or "
                           "params.switch_lid + switch_port");
  }
  if (!by_hca && !by_guid && !by_switch) {
    return InvalidArgument(
        "params.hca: required: the HCA whose switch port to disable, as ibnetdiscover names it "
        "(e.g. \"gpu002 mlx5_0\"); or params.guid (its port GUID), or params.switch_lid + "
        "switch_port");
  }
  if (p.Has("port") && !by_hca)
    return InvalidArgument("params.port: the HCA port number goes with params.hca only");
  if (by_hca) {
    auto hca = p.String("hca");
    if (!hca.ok()) return hca.status();
    out.victim.hca = *hca;
    auto port = p.Int("port", 1, 1, 254);
    if (!port.ok()) return port.status();
    out.victim.hca_port = *port;
  } else if (by_guid) {
    auto text = p.String("guid");
    if (!text.ok()) return text.status();
    auto guid = ParseIbGuid(*text);
    if (!guid.ok() || *guid == 0) {
      return InvalidArgument("params.guid: \"" + *text +
                             "\" is not a port GUID (like 0x0002c90300a0b1c1)");
    }
    out.victim.guid = *guid;
  } else {
    auto lid = ReadIntOrHex(p, params, "switch_lid", 1, 0xBFFF);  // unicast LIDs
    if (!lid.ok()) return lid.status();
    auto port = ReadIntOrHex(p, params, "switch_port", 1, 254);  // 0 is the switch itself
    if (!port.ok()) return port.status();
    if (!*lid) return InvalidArgument("params.switch_lid: required with params.switch_port");
    if (!*port) return InvalidArgument("params.switch_port: required with params.switch_lid");
    out.victim.switch_lid = *lid;
    out.victim.switch_port = *port;
  }
  if (p.Has("device")) {
    auto device = p.String("device");
    if (!device.ok()) return device.status();
    if (device->find('/') != std::string::npos)
      return InvalidArgument("params.device: an HCA name like mlx5_0");
    out.device = *device;
  }
  if (p.Has("local_port")) {
    if (!out.device)
      return InvalidArgument("params.local_port: only with params.device (the local HCA)");
    auto port = p.Int("local_port", 1, 1, 254);
    if (!port.ok()) return port.status();
    out.local_port = *port;
  }
  auto root = p.String("sysfs_root", out.root);
  if (!root.ok()) return root.status();
  out.root = *root;
  if (p.Has("down")) {
    auto schedule = ReadFlapSchedule(p);
    if (!schedule.ok()) return schedule.status();
    if (auto s = schedule->Check("port"); !s.ok()) return s;
    out.flap = *schedule;
  } else {
    for (const char* key : {"count", "period"}) {
      if (p.Has(key)) {
        return InvalidArgument(std::string("params.") + key +
                               ": only with params.down (a flap); without it the port stays "
                               "disabled for the fault's whole window");
      }
    }
  }
  if (auto s = p.Finish(); !s.ok()) return s;
  return out;
}

Status ProbeIbSwitchPort(const Json& params, Host host) {
  std::string root = "/sys/class/infiniband";
  if (params.is_object() && params.contains("sysfs_root") && params["sysfs_root"].is_string())
    root = params["sysfs_root"].get<std::string>();
  if (!host.sysfs || !host.sysfs->Exists(root)) {
    return Unsupported("ib_switch_port: no InfiniBand devices here (" + root +
                       " does not exist); the SMPs leave by a local HCA port");
  }
  bool any_ib = false;
  auto devices = host.sysfs->List(root);
  for (const auto& dev : devices.ok() ? *devices : std::vector<std::string>{}) {
    if (params.is_object() && params.contains("device") && params["device"] != dev) continue;
    auto ports = host.sysfs->List(root + "/" + dev + "/ports");
    for (const auto& n : ports.ok() ? *ports : std::vector<std::string>{}) {
      auto layer = host.sysfs->Read(root + "/" + dev + "/ports/" + n + "/link_layer");
      if (!layer.ok() || layer->rfind("Ethernet", 0) != 0) any_ib = true;
    }
  }
  if (!any_ib) {
    return Unsupported(
        "ib_switch_port: no InfiniBand port " +
        std::string(params.is_object() && params.contains("device") ? "of params.device " : "") +
        "under " + root + " (RoCE ports have no subnet manager nor switch LIDs)");
  }
  for (const char* tool : {"ibnetdiscover", "smpquery", "ibportstate"}) {
    auto r = host.runner->Run({tool, "-V"}, std::chrono::seconds(5));
    if (r.ok()) continue;
    if (IsProgramMissing(r.status())) {
      return Unsupported(std::string("ib_switch_port needs ") + tool +
                         " (infiniband-diags): " + r.status().message());
    }
    return r.status().Annotate("ib_switch_port");
  }
  return Status::Ok();
}

// ---- IbSwitchPortToggle ----

std::vector<std::string> IbSwitchPortToggle::LocalArgs() const {
  std::string dev = !local_device_.empty() ? local_device_
                    : params_.device       ? *params_.device
                                           : "<first ACTIVE HCA>";
  std::string port = local_port_          ? std::to_string(local_port_)
                     : params_.local_port ? std::to_string(*params_.local_port)
                     : params_.device     ? "<its first ACTIVE port>"
                                          : "<its port>";
  return {"-C", dev, "-P", port};
}

std::vector<std::string> IbSwitchPortToggle::SwitchArgs() const {
  if (switch_lid_) return {std::to_string(switch_lid_), std::to_string(switch_port_)};
  if (params_.victim.switch_lid)
    return {std::to_string(*params_.victim.switch_lid),
            std::to_string(*params_.victim.switch_port)};
  return {"<switch LID>", "<switch port>"};
}

std::vector<std::string> IbSwitchPortToggle::Argv(bool enable) const {
  std::vector<std::string> argv = {"ibportstate"};
  for (auto part : {LocalArgs(), SwitchArgs()}) argv.insert(argv.end(), part.begin(), part.end());
  argv.push_back(enable ? "enable" : "disable");
  return argv;
}

std::string IbSwitchPortToggle::CaptureLine() const {
  std::vector<std::string> discover = {"ibnetdiscover", "-p"};
  for (const auto& a : LocalArgs()) discover.push_back(a);
  return JoinArgv(discover) + "; " + JoinArgv(SmpQueryArgv(LocalArgs(), SwitchArgs()));
}

std::string IbSwitchPortToggle::Name() const {
  if (params_.victim.hca)
    return "switch port facing " + *params_.victim.hca + " port " +
           std::to_string(params_.victim.hca_port);
  if (params_.victim.guid) return "switch port facing " + FormatIbGuid(*params_.victim.guid);
  return "switch lid " + std::to_string(params_.victim.switch_lid.value_or(0)) + " port " +
         std::to_string(params_.victim.switch_port.value_or(0));
}

std::string IbSwitchPortToggle::Resolved() const {
  if (!switch_lid_) return Name();
  IbSwitchPortFound found{switch_lid_, switch_port_, switch_guid_, peer_};
  return found.Name() + (peer_.empty() ? "" : " (peer of " + peer_ + ")");
}

Result<IbSmpPortState> IbSwitchPortToggle::QueryState() const {
  auto state = QuerySwitchPort(*host_.runner, LocalArgs(), SwitchArgs());
  if (!state.ok()) return state.status().Annotate(Who());
  return state;
}

Status IbSwitchPortToggle::Capture() {
  auto local = PickLocalIbPort(host_.sysfs, params_);
  if (!local.ok()) return local.status().Annotate("ib_switch_port");
  auto gid = host_.sysfs->Read(local->Dir() + "/gids/0");
  if (!gid.ok()) return gid.status().Annotate("ib_switch_port: the GUID of " + local->Name());
  auto local_guid = IbGidPortGuid(*gid);
  if (!local_guid.ok()) return local_guid.status().Annotate("ib_switch_port " + local->Name());
  const std::vector<std::string> local_args = {"-C", local->device, "-P",
                                               std::to_string(local->port)};
  std::vector<std::string> discover = {"ibnetdiscover", "-p"};
  discover.insert(discover.end(), local_args.begin(), local_args.end());
  auto out = RunIbDiag(*host_.runner, discover, kDiscoverTimeout);
  if (!out.ok()) return out.status().Annotate("ib_switch_port " + Name());
  auto report = ParseIbPortsReport(*out);
  if (!report.ok()) return report.status().Annotate("ib_switch_port " + Name());
  auto found = FindSwitchPortFacing(params_.victim, *report, local->Name(), *local_guid);
  if (!found.ok()) return found.status().Annotate("ib_switch_port " + Name());

  const std::string who = "ib_switch_port " + found->Name();
  auto state = QuerySwitchPort(*host_.runner, local_args,
                               {std::to_string(found->lid), std::to_string(found->port)});
  if (!state.ok()) return state.status().Annotate(who);
  if (state->phys_state == "Disabled") {
    return FailedPrecondition(who +
                              ": the switch port is already disabled (PhysLinkState Disabled); "
                              "enabling it afterwards would not restore what was found");
  }
  if (state->link_state != "Active" || state->phys_state != "LinkUp") {
    return FailedPrecondition(who + ": the switch port is " + state->link_state + "/" +
                              state->phys_state +
                              "; only an Active/LinkUp port is disabled (Revert brings back the "
                              "state Capture saw)");
  }
  if (found->peer.empty())
    return FailedPrecondition(who + ": ibnetdiscover shows nothing linked to it");
  local_device_ = local->device;
  local_port_ = local->port;
  switch_lid_ = found->lid;
  switch_port_ = found->port;
  switch_guid_ = found->guid;
  peer_ = found->peer;
  prior_link_state_ = state->link_state;
  return Status::Ok();
}

Json IbSwitchPortToggle::Saved() const {
  return {{"local_device", local_device_},
          {"local_port", local_port_},
          {"switch_lid", switch_lid_},
          {"switch_port", switch_port_},
          {"switch_guid", FormatIbGuid(switch_guid_)},
          {"peer", peer_},
          {"prior_link_state", prior_link_state_}};
}

void IbSwitchPortToggle::Load(const Json& saved) {
  local_device_ = saved.value("local_device", std::string());
  local_port_ = saved.value("local_port", int64_t{0});
  switch_lid_ = saved.value("switch_lid", int64_t{0});
  switch_port_ = saved.value("switch_port", int64_t{0});
  auto guid = ParseIbGuid(saved.value("switch_guid", std::string("0x0")));
  switch_guid_ = guid.ok() ? *guid : 0;
  peer_ = saved.value("peer", std::string());
  prior_link_state_ = saved.value("prior_link_state", std::string("Active"));
  // A record without the local port cannot address the switch: never captured.
  if (local_device_.empty() || !local_port_) switch_lid_ = 0;
}

Status IbSwitchPortToggle::Set(bool enabled) {
  if (!switch_lid_) return FailedPrecondition(Who() + ": Capture must run before Apply");
  auto r = RunIbDiag(*host_.runner, Argv(enabled));
  return r.ok() ? Status::Ok() : r.status().Annotate(Who());
}

Status IbSwitchPortToggle::Expect(bool enabled, const std::string& why) {
  auto state = QueryState();
  if (!state.ok()) return state.status();
  if ((state->phys_state == "Disabled") == enabled) {
    return FailedPrecondition(Who() + ": PhysLinkState is " + state->phys_state + ", expected " +
                              (enabled ? "not Disabled" : "Disabled") + " (" + why + ")");
  }
  return Status::Ok();
}

Status IbSwitchPortToggle::Restore() {
  if (!switch_lid_) return Status::Ok();  // never captured, so never applied
  auto state = QueryState();
  if (!state.ok()) return state.status();
  // Polling or LinkUp: retraining or up, not ours to bounce again.
  if (state->phys_state != "Disabled") return Status::Ok();
  return Set(true);
}

Status IbSwitchPortToggle::VerifyRestored() {
  if (!switch_lid_) return Status::Ok();
  auto state = QueryState();
  if (!state.ok()) return state.status();
  if (state->phys_state == "Disabled")
    return FailedPrecondition(Who() + ": the switch port is still disabled");
  if (state->link_state != prior_link_state_) {
    return FailedPrecondition(Who() + ": LinkState is " + state->link_state + " (PhysLinkState " +
                              state->phys_state + "), expected " + prior_link_state_ +
                              " as found; after enable the link retrains and the subnet manager "
                              "must make it Active");
  }
  return Status::Ok();
}

// ---- the Fault ----

std::vector<std::string> IbSwitchPortFault::Mechanism() const {
  std::vector<std::string> lines = {"capture: " + toggle_->CaptureLine()};
  for (auto& line : inner_->Mechanism()) lines.push_back(std::move(line));
  return lines;
}

Result<std::unique_ptr<Fault>> MakeIbSwitchPort(const Json& params, Host host) {
  auto pp = ReadIbSwitchPortParams(params);
  if (!pp.ok()) return pp.status();
  const std::optional<FlapSchedule> flap = pp->flap;
  auto toggle = std::make_unique<IbSwitchPortToggle>(host, std::move(*pp));
  const IbSwitchPortToggle* raw = toggle.get();
  std::unique_ptr<Fault> inner;
  if (flap) {
    inner = std::make_unique<FlapFault>(std::move(toggle), *flap);
  } else {
    inner = std::make_unique<OffFault>(std::move(toggle));
  }
  return std::unique_ptr<Fault>(std::make_unique<IbSwitchPortFault>(std::move(inner), raw));
}

}  // namespace fdrill
