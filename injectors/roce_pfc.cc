// roce_pfc: turns IEEE 802.1Qbb priority flow control off (or on) for some
// priorities of a RoCE netdev: a host whose lossless class was lost to a
// QoS misconfiguration.
//
// Hardware facts. RoCE (v2 with go-back-N retransmission) relies on PFC for
// a lossless priority: with PFC off for RoCE's priority (commonly 3) the NIC
// neither sends PAUSE for it when its receive buffer fills nor stops sending
// when the switch pauses it, so under congestion (incast, an all-to-all) the
// switch or the NIC drops RoCE packets and every drop costs a go-back-N
// retransmission: bandwidth collapses, and a QP that exhausts its retries
// (NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT) fails the job. Without congestion
// nothing drops and the fault shows nothing. PFC is per priority, not per
// TC. Where DCBX runs in the NIC's firmware or lldpad in "willing" mode, the
// switch's next DCBX exchange may set PFC back; Verify sees only the moment
// it runs.
//
// Mechanism: `dcb pfc set dev IF prio-pfc P:off ...` for the listed
// priorities (dcb reads the whole ieee_pfc, changes those bits and writes it
// back: pfc_cap, delay and the other priorities stay). Capture reads `dcb -j
// pfc show dev IF` (prio_pfc: eight booleans) and refuses a netdev without
// DCB (Unsupported, with dcb's error) and a no-op, every listed priority
// already in the target state (FailedPrecondition). Verify reads prio_pfc
// back. Revert writes the captured state of the listed priorities back in
// one `dcb pfc set`, only while it differs: safe after a failed Apply and
// safe twice; a netdev that has gone has nothing left to revert.
// VerifyReverted reads them back as captured.
#include <algorithm>
#include <array>

#include "common/core/json.h"
#include "injectors/injector.h"
#include "injectors/params.h"
#include "injectors/roce_netdev.h"

namespace fdrill {

namespace {

constexpr int kPriorities = 8;  // IEEE_8021QAZ_MAX_TCS
using PfcMap = std::array<bool, kPriorities>;

class RocePfc final : public Fault {
 public:
  RocePfc(Host host, std::string ifname, std::vector<int> priorities, bool on)
      : host_(host), ifname_(std::move(ifname)), priorities_(std::move(priorities)), on_(on) {}

  Status Capture() override {
    auto now = ReadPfc();
    if (!now.ok()) return now.status();
    bool changes = false;
    for (int p : priorities_) changes = changes || (*now)[p] != on_;
    if (!changes) {
      return FailedPrecondition(Who() + ": PFC is already " + State(on_) + " for " +
                                List(priorities_) + "; the fault would change nothing");
    }
    prior_ = *now;
    captured_ = true;
    resolved_ = NetdevWithRdmaPort(host_.sysfs, ifname_) + " " + List(priorities_);
    return Status::Ok();
  }

  Json Saved() const override {
    Json prior = Json::array();
    for (bool on : prior_) prior.push_back(on);
    return {{"prior_prio_pfc", prior}, {"resolved", resolved_}};
  }

  Status Load(const Json& saved) override {
    if (!saved.is_object() || !saved.contains("prior_prio_pfc")) return Status::Ok();
    const Json& prior = saved["prior_prio_pfc"];
    if (!prior.is_array() || prior.size() != kPriorities)
      return InvalidArgument("saved.prior_prio_pfc: expected 8 booleans, got " + DumpJson(prior));
    for (int p = 0; p < kPriorities; ++p) {
      if (!prior[p].is_boolean())
        return InvalidArgument("saved.prior_prio_pfc: expected 8 booleans, got " + DumpJson(prior));
      prior_[p] = prior[p].get<bool>();
    }
    resolved_ = saved.value("resolved", "");
    captured_ = true;
    return Status::Ok();
  }

  Status Apply() override {
    PfcMap want = prior_;
    for (int p : priorities_) want[p] = on_;
    auto r = RunChecked(*host_.runner, SetArgv(want));
    return r.ok() ? Status::Ok() : r.status().Annotate(Who());
  }

  Status Verify() override {
    auto now = ReadPfc();
    if (!now.ok()) return now.status();
    for (int p : priorities_) {
      if ((*now)[p] != on_) {
        return FailedPrecondition(Who() + ": PFC reads back " + State((*now)[p]) +
                                  " for priority " + std::to_string(p) + ", expected " +
                                  State(on_));
      }
    }
    return Status::Ok();
  }

  Status Revert() override {
    if (!captured_) return Status::Ok();  // never captured, so never applied
    auto now = ReadPfc();
    if (!now.ok())
      return now.status().code() == StatusCode::kNotFound ? Status::Ok() : now.status();
    if (Matches(*now)) return Status::Ok();  // never applied, or already reverted
    auto r = RunChecked(*host_.runner, SetArgv(prior_));
    return r.ok() ? Status::Ok() : r.status().Annotate(Who());
  }

  Status VerifyReverted() override {
    if (!captured_) return Status::Ok();
    auto now = ReadPfc();
    if (!now.ok()) return now.status();
    if (!Matches(*now)) {
      return FailedPrecondition(Who() + ": PFC reads back " + Describe(*now) + ", expected " +
                                Describe(prior_) + " as found");
    }
    return Status::Ok();
  }

  std::string Target() const override { return ifname_; }
  std::string ResolvedTarget() const override {
    return resolved_.empty() ? ifname_ + " " + List(priorities_) : resolved_;
  }

  std::vector<std::string> Mechanism() const override {
    PfcMap want{};
    for (int p : priorities_) want[p] = on_;
    std::string revert = "revert: dcb pfc set dev " + ifname_ + " prio-pfc";
    for (int p : priorities_) revert += " " + std::to_string(p) + ":<as found>";
    return {"capture: dcb -j pfc show dev " + ifname_, "apply: " + JoinArgv(SetArgv(want)),
            captured_ ? "revert: " + JoinArgv(SetArgv(prior_)) : revert};
  }

 private:
  std::string Who() const { return "roce_pfc " + ifname_; }
  static std::string State(bool on) { return on ? "on" : "off"; }
  static std::string List(const std::vector<int>& priorities) {
    std::string out = priorities.size() == 1 ? "priority " : "priorities ";
    for (size_t i = 0; i < priorities.size(); ++i)
      out += (i ? "," : "") + std::to_string(priorities[i]);
    return out;
  }
  // "3:on 4:off": the listed priorities of `map`.
  std::string Describe(const PfcMap& map) const {
    std::string out;
    for (int p : priorities_)
      out += (out.empty() ? "" : " ") + std::to_string(p) + ":" + State(map[p]);
    return out;
  }
  bool Matches(const PfcMap& now) const {
    for (int p : priorities_)
      if (now[p] != prior_[p]) return false;
    return true;
  }

  // `dcb pfc set dev IF prio-pfc P:on|off` for the listed priorities, as `map` has them.
  std::vector<std::string> SetArgv(const PfcMap& map) const {
    std::vector<std::string> argv = {"dcb", "pfc", "set", "dev", ifname_, "prio-pfc"};
    for (int p : priorities_) argv.push_back(std::to_string(p) + ":" + State(map[p]));
    return argv;
  }

  Result<PfcMap> ReadPfc() {
    auto j = DcbShow(*host_.runner, "pfc", ifname_, Who());
    if (!j.ok()) return j.status();
    const Json& list = j->contains("prio_pfc") ? (*j)["prio_pfc"] : Json();
    if (!list.is_array() || list.size() != kPriorities)
      return Internal(Who() + ": `dcb -j pfc show` printed no 8 prio_pfc: " + DumpJson(*j));
    PfcMap map{};
    for (int p = 0; p < kPriorities; ++p) {
      // iproute2 6.1 prints booleans (print_on_off in a JSON context).
      if (list[p].is_boolean()) {
        map[p] = list[p].get<bool>();
      } else if (list[p] == "on" || list[p] == "off") {
        map[p] = list[p] == "on";
      } else {
        return Internal(Who() + ": `dcb -j pfc show` printed prio_pfc " + DumpJson(list));
      }
    }
    return map;
  }

  Host host_;
  std::string ifname_;
  std::vector<int> priorities_;  // each 0-7, once, as given
  bool on_;                      // the target state
  bool captured_ = false;
  PfcMap prior_{};
  std::string resolved_;  // "eth2 (mlx5_1/2 RoCE) priority 3", set by Capture
};

// params.priorities: an integer 0-7 or a non-empty list of them, each once.
Result<std::vector<int>> ReadPriorities(ParamReader& p, const Json& params) {
  const std::string form = "a priority 0-7 or a non-empty list of them (RoCE's is commonly 3)";
  if (!p.Has("priorities")) return InvalidArgument("params.priorities: required (" + form + ")");
  (void)p.String("priorities", std::string());  // marks the key read; its shape is checked here
  const Json& v = params["priorities"];
  const Json list = v.is_array() ? v : Json::array({v});
  if (list.empty()) return InvalidArgument("params.priorities: must be " + form);
  std::vector<int> out;
  for (const auto& item : list) {
    if (!item.is_number_integer() || item.get<int64_t>() < 0 || item.get<int64_t>() >= kPriorities)
      return InvalidArgument("params.priorities: must be " + form + ", not " + DumpJson(item));
    const int prio = static_cast<int>(item.get<int64_t>());
    if (std::find(out.begin(), out.end(), prio) != out.end())
      return InvalidArgument("params.priorities: " + std::to_string(prio) + " is listed twice");
    out.push_back(prio);
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Fault>> MakeRocePfc(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  auto priorities = ReadPriorities(p, params);
  if (!priorities.ok()) return priorities.status();
  auto state = p.String("state", "off");
  if (!state.ok()) return state.status();
  if (*state != "off" && *state != "on")
    return InvalidArgument("params.state: must be off or on, not \"" + *state + "\"");
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(
      std::make_unique<RocePfc>(host, *ifname, std::move(*priorities), *state == "on"));
}

Status ProbeRocePfc(const Json& params, Host host) {
  if (auto s = ProbeToolVersion(*host.runner, {"dcb", "-V"}, "iproute2", "roce_pfc"); !s.ok())
    return s;
  return ProbeNetdevInSysfs(host.sysfs, params, "roce_pfc");
}

}  // namespace fdrill
