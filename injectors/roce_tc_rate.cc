// roce_tc_rate: caps one hardware traffic class's egress rate on a RoCE
// netdev with IEEE 802.1Qaz ETS maxrate, in the NIC: a port whose RoCE
// traffic is throttled below line rate (a misconfigured QoS policy, a
// congested class), which tc cannot make because RDMA bypasses the qdiscs.
//
// Hardware facts. The cap belongs to one hardware TC of the port and holds
// everything the port sends in that TC: RoCE (the QPs whose priority maps to
// the TC) and kernel TCP/IP mapped to it alike. Which TC RoCE uses is the
// site's QoS: the priority RoCE packets carry (commonly 3, from DSCP 26 or
// VLAN PCP 3) mapped to a TC by ETS prio-tc (`dcb ets show dev IF prio-tc`);
// fdrill does not guess it, params.tc is required. mlx5 keeps the cap in 100
// Mbit/s steps up to 25.5 Gbit/s and 1 Gbit/s steps above, in a u8 (at most
// 255 Gbit/s), rounding down; a non-zero cap under 100 Mbit/s becomes 100
// Mbit/s (en_dcbnl.c, mlx5e_dcbnl_ieee_setmaxrate); 0 is "no cap".
//
// Mechanism: `dcb maxrate set dev IF tc-maxrate TC:RATE`, RATE written for
// the installed dcb's unit convention (roce_netdev.h: iproute2 before 6.18
// writes bytes/s where the kernel reads kbit/s). Capture asks `dcb -V` for
// that convention and reads all eight caps with `dcb -j maxrate show dev
// IF`, in the kernel's kbit/s; it refuses a netdev without DCB maxrate
// support (Unsupported, with dcb's error) and a TC already capped at or below
// the target (the fault would change nothing, or lift a cap). Verify reads
// the caps back: in force when the TC's cap is non-zero and at most the
// target (the device rounds down to its step). Revert sets every TC back in
// one `dcb maxrate set dev IF tc-maxrate 0:R0 ... 7:R7`, and only while the
// caps differ from those captured: safe after a failed Apply and safe twice;
// a netdev that has gone has nothing left to revert. VerifyReverted reads all
// eight back equal to those captured.
#include <array>

#include "common/core/json.h"
#include "injectors/injector.h"
#include "injectors/params.h"
#include "injectors/roce_netdev.h"

namespace fdrill {

namespace {

constexpr int kTcs = 8;                   // IEEE_8021QAZ_MAX_TCS
using Caps = std::array<uint64_t, kTcs>;  // kbit/s per TC, as the kernel holds them

std::string Kbps(uint64_t kbps) {
  return kbps == 0 ? std::string("no cap") : FormatRate(kbps * 1000);
}

std::string Describe(const Caps& caps) {
  std::string out;
  for (int tc = 0; tc < kTcs; ++tc) {
    out += (tc ? " " : "") + std::to_string(tc) + ":" + Kbps(caps[tc]);
  }
  return out;
}

class RoceTcRate final : public Fault {
 public:
  RoceTcRate(Host host, std::string ifname, int tc, uint64_t rate_bits)
      : host_(host), ifname_(std::move(ifname)), tc_(tc), target_kbps_(rate_bits / 1000) {}

  Status Capture() override {
    if (auto s = ReadUnits(); !s.ok()) return s;
    auto caps = ReadCaps();
    if (!caps.ok()) return caps.status();
    const uint64_t now = (*caps)[tc_];
    if (now != 0 && now <= target_kbps_) {
      return FailedPrecondition(Who() + ": tc " + std::to_string(tc_) + " is already capped at " +
                                Kbps(now) + ", at or below " + Kbps(target_kbps_) +
                                "; the fault would change nothing");
    }
    prior_ = *caps;
    captured_ = true;
    resolved_ = NetdevWithRdmaPort(host_.sysfs, ifname_) + " tc " + std::to_string(tc_);
    return Status::Ok();
  }

  Json Saved() const override {
    Json caps = Json::array();
    for (uint64_t c : prior_) caps.push_back(c);
    return {{"prior_kbps", caps}, {"resolved", resolved_}};
  }

  Status Load(const Json& saved) override {
    if (!saved.is_object() || !saved.contains("prior_kbps")) return Status::Ok();  // never captured
    const Json& caps = saved["prior_kbps"];
    if (!caps.is_array() || caps.size() != kTcs)
      return InvalidArgument("saved.prior_kbps: expected 8 rates in kbit/s, got " + DumpJson(caps));
    for (int tc = 0; tc < kTcs; ++tc) {
      if (!caps[tc].is_number_unsigned())
        return InvalidArgument("saved.prior_kbps: expected 8 rates in kbit/s, got " +
                               DumpJson(caps));
      prior_[tc] = caps[tc].get<uint64_t>();
    }
    resolved_ = saved.value("resolved", "");
    captured_ = true;
    return Status::Ok();
  }

  Status Apply() override {
    if (auto s = ReadUnits(); !s.ok()) return s;
    auto r = RunChecked(*host_.runner, SetArgv({{tc_, target_kbps_}}));
    return r.ok() ? Status::Ok() : r.status().Annotate(Who());
  }

  Status Verify() override {
    auto caps = ReadCaps();
    if (!caps.ok()) return caps.status();
    const uint64_t now = (*caps)[tc_];
    if (now == 0 || now > target_kbps_) {
      return FailedPrecondition(Who() + ": tc " + std::to_string(tc_) + " reads back " + Kbps(now) +
                                ", expected a cap of at most " + Kbps(target_kbps_));
    }
    return Status::Ok();
  }

  Status Revert() override {
    if (!captured_) return Status::Ok();  // never captured, so never applied
    auto caps = ReadCaps();
    if (!caps.ok())
      return caps.status().code() == StatusCode::kNotFound ? Status::Ok() : caps.status();
    if (*caps == prior_) return Status::Ok();  // never applied, or already reverted
    auto r = RunChecked(*host_.runner, RestoreArgv());
    return r.ok() ? Status::Ok() : r.status().Annotate(Who());
  }

  Status VerifyReverted() override {
    if (!captured_) return Status::Ok();
    auto caps = ReadCaps();
    if (!caps.ok()) return caps.status();
    if (*caps != prior_) {
      return FailedPrecondition(Who() + ": caps read back " + Describe(*caps) + ", expected " +
                                Describe(prior_) + " as found");
    }
    return Status::Ok();
  }

  std::string Target() const override { return ifname_; }
  std::string ResolvedTarget() const override {
    return resolved_.empty() ? ifname_ + " tc " + std::to_string(tc_) : resolved_;
  }

  std::vector<std::string> Mechanism() const override {
    std::vector<std::string> out = {"capture: dcb -V; dcb -j maxrate show dev " + ifname_};
    if (units_) {
      out.push_back("apply: " + JoinArgv(SetArgv({{tc_, target_kbps_}})));
    } else {
      const std::string base =
          "apply: dcb maxrate set dev " + ifname_ + " tc-maxrate " + std::to_string(tc_) + ":";
      out.push_back(base + DcbRateArg(target_kbps_, DcbRateUnits::kConverted) +
                    " (iproute2 >= 6.18)");
      out.push_back(base + DcbRateArg(target_kbps_, DcbRateUnits::kBytesAsKbit) +
                    " (iproute2 < 6.18 writes bytes/s as kbit/s: this is " + Kbps(target_kbps_) +
                    " to the kernel)");
    }
    out.push_back(captured_ && units_ ? "revert: " + JoinArgv(RestoreArgv())
                                      : "revert: dcb maxrate set dev " + ifname_ +
                                            " tc-maxrate 0:R0 1:R1 ... 7:R7 (every TC's cap as "
                                            "`dcb -j maxrate show` read it before)");
    return out;
  }

 private:
  std::string Who() const { return "roce_tc_rate " + ifname_; }

  // Once per Fault: after Load (a restarted agent) Revert asks again.
  Status ReadUnits() {
    if (units_) return Status::Ok();
    auto units = ReadDcbRateUnits(*host_.runner, Who());
    if (!units.ok()) return units.status();
    units_ = *units;
    return Status::Ok();
  }

  Result<Caps> ReadCaps() {
    if (auto s = ReadUnits(); !s.ok()) return s;
    auto j = DcbShow(*host_.runner, "maxrate", ifname_, Who());
    if (!j.ok()) return j.status();
    const Json& list = j->contains("tc_maxrate") ? (*j)["tc_maxrate"] : Json();
    Caps caps{};
    if (!list.is_array() || list.size() != kTcs)
      return Internal(Who() + ": `dcb -j maxrate show` printed no 8 tc_maxrate: " + DumpJson(*j));
    for (int tc = 0; tc < kTcs; ++tc) {
      if (!list[tc].is_number_unsigned())
        return Internal(Who() + ": `dcb -j maxrate show` printed tc_maxrate " + DumpJson(list));
      caps[tc] = DcbJsonRateToKbps(list[tc].get<uint64_t>(), *units_);
    }
    return caps;
  }

  std::vector<std::string> SetArgv(const std::vector<std::pair<int, uint64_t>>& caps) const {
    std::vector<std::string> argv = {"dcb", "maxrate", "set", "dev", ifname_, "tc-maxrate"};
    for (const auto& [tc, kbps] : caps)
      argv.push_back(std::to_string(tc) + ":" + DcbRateArg(kbps, *units_));
    return argv;
  }

  std::vector<std::string> RestoreArgv() const {
    std::vector<std::pair<int, uint64_t>> all;
    for (int tc = 0; tc < kTcs; ++tc) all.emplace_back(tc, prior_[tc]);
    return SetArgv(all);
  }

  Host host_;
  std::string ifname_;
  int tc_;
  uint64_t target_kbps_;
  std::optional<DcbRateUnits> units_;  // the installed dcb's, asked once
  bool captured_ = false;
  Caps prior_{};
  std::string resolved_;  // "eth2 (mlx5_1/2 RoCE) tc 3", set by Capture
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeRoceTcRate(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  if (!p.Has("tc")) {
    return InvalidArgument(
        "params.tc: required: the hardware traffic class RoCE uses, 0-7 (the TC its priority "
        "maps to: `dcb ets show dev IF prio-tc`)");
  }
  auto tc = p.Int("tc", 0, 0, kTcs - 1);
  if (!tc.ok()) return tc.status();
  auto rate = p.Rate("rate");
  if (!rate.ok()) return rate.status();
  if (*rate % 1000 != 0) {
    return InvalidArgument("params.rate: ETS maxrate is set in whole kbit/s, and " +
                           std::to_string(*rate) + " bit/s is not");
  }
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(
      std::make_unique<RoceTcRate>(host, *ifname, static_cast<int>(*tc), *rate));
}

Status ProbeRoceTcRate(const Json& params, Host host) {
  if (auto s = ProbeToolVersion(*host.runner, {"dcb", "-V"}, "iproute2", "roce_tc_rate"); !s.ok())
    return s;
  return ProbeNetdevInSysfs(host.sysfs, params, "roce_tc_rate");
}

}  // namespace fdrill
