// link_speed: forces an Ethernet netdev to a lower link speed, e.g. a 100G
// RoCE port to 25G: a link that trained down (a bad cable, a dirty optic),
// which slows everything the port carries, RoCE RDMA and kernel TCP/IP.
//
// Hardware facts. Changing the speed retrains the link: the port drops
// carrier for a moment (seconds on a 100G optic) on Apply and again on
// Revert, so RDMA QPs see it as a short flap. With autoneg off both ends
// must run the same speed: a switch port left on autoneg or not configured
// for the forced speed leaves the link down, which Verify reports. The
// speeds a port can be forced to are those of its supported link modes
// ("25000baseCR/Full": 25000 Mb/s). A forced speed's modes become the ones
// the port advertises (mlx5: en_ethtool.c, mlx5e_ethtool_set_link_ksettings),
// and `ethtool -s IF autoneg on` alone advertises every supported mode
// (ethtool 6.1's ioctl-compatible default, netlink/settings.c,
// nl_sset_compat_linkmodes): neither is what a port advertising fewer had, so
// Revert names each supported mode on or off as Capture found it.
//
// Mechanism: `ethtool -s IF speed N duplex full autoneg off`. Capture parses
// `ethtool IF` (ethtool 6.1 over netlink; samples in
// tests/injectors/testdata/): "Speed: 100000Mb/s", "Duplex: Full",
// "Auto-negotiation: on", the "Supported link modes:" and "Advertised link
// modes:" lists (one mode per line, a Half/Full pair on one), "Link
// detected: yes". It refuses a netdev with no link settings or no supported
// link modes (Unsupported), a link that is down or reports "Speed:
// Unknown!", a speed the port does not support, and a link already at or
// below the target. Verify reads `ethtool IF`: autoneg off and Speed N.
// Revert restores what Capture saw: autoneg on with `advertise MODE on|off`
// for every supported mode as it was advertised, or the forced speed and
// duplex with autoneg off; only while the settings differ from those
// captured, so it is safe after a failed Apply and safe twice, and a netdev
// that has gone has nothing left to revert. VerifyReverted reads them back,
// and the speed the link came up at.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "common/core/json.h"
#include "injectors/injector.h"
#include "injectors/params.h"
#include "injectors/roce_netdev.h"

namespace fdrill {

namespace {

constexpr uint64_t kMaxSpeedMbps = 10'000'000;  // 10 Tb/s, as kRates

// What `ethtool IF` says, as far as link_speed reads it.
struct LinkSettings {
  bool has_speed = false;              // a "Speed:" line at all
  std::optional<uint64_t> speed_mbps;  // nullopt: "Speed: Unknown!"
  std::string duplex;                  // "full", "half", "" (Unknown!)
  std::optional<bool> autoneg;
  std::optional<bool> link_detected;
  std::vector<std::string> supported;   // "25000baseCR/Full"; empty: "Not reported"
  std::vector<std::string> advertised;  // likewise
};

std::string Trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// `ethtool IF` as printed by ethtool 6.1: "\tKey: value" lines; a link mode
// list continues on lines of its own, indented, without a colon.
LinkSettings ParseEthtool(const std::string& out) {
  LinkSettings s;
  std::vector<std::string>* list = nullptr;  // the mode list being continued
  std::istringstream lines(out);
  for (std::string raw; std::getline(lines, raw);) {
    const std::string line = Trimmed(raw);
    const size_t colon = line.find(": ");
    const bool keyed = colon != std::string::npos || (!line.empty() && line.back() == ':');
    if (!keyed) {
      if (list == nullptr) continue;
      std::istringstream words(line);
      for (std::string w; words >> w;) list->push_back(w);
      continue;
    }
    list = nullptr;
    const std::string key = line.substr(0, line.find(':'));
    const std::string value = colon == std::string::npos ? "" : Trimmed(line.substr(colon + 2));
    if (key == "Supported link modes" || key == "Advertised link modes") {
      list = key[0] == 'S' ? &s.supported : &s.advertised;
      if (value == "Not reported") continue;
      std::istringstream words(value);
      for (std::string w; words >> w;) list->push_back(w);
    } else if (key == "Speed") {
      s.has_speed = true;
      unsigned long long mbps = 0;  // "100000Mb/s"; "Unknown!" has none
      if (std::sscanf(value.c_str(), "%lluMb/s", &mbps) == 1 && mbps > 0) s.speed_mbps = mbps;
    } else if (key == "Duplex") {
      s.duplex = value == "Full" ? "full" : value == "Half" ? "half" : "";
    } else if (key == "Auto-negotiation") {
      s.autoneg = value == "on";
    } else if (key == "Link detected") {
      s.link_detected = value == "yes";
    }
  }
  return s;
}

// 25000 for "25000baseCR/Full"; 0 when the name has no leading speed.
uint64_t ModeSpeed(const std::string& mode) {
  uint64_t mbps = 0;
  size_t i = 0;
  for (; i < mode.size() && std::isdigit(static_cast<unsigned char>(mode[i])); ++i)
    mbps = mbps * 10 + static_cast<uint64_t>(mode[i] - '0');
  return mode.compare(i, 4, "base") == 0 ? mbps : 0;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string Mbps(uint64_t mbps) { return std::to_string(mbps) + " Mb/s"; }

class LinkSpeed final : public Fault {
 public:
  LinkSpeed(Host host, std::string ifname, uint64_t speed_mbps)
      : host_(host), ifname_(std::move(ifname)), target_(speed_mbps) {}

  Status Capture() override {
    auto now = Read();
    if (!now.ok()) return now.status();
    if (!now->has_speed || !now->autoneg)
      return Unsupported(Who() + ": ethtool reports no link settings (speed, auto-negotiation)");
    if (now->link_detected == false)
      return FailedPrecondition(Who() + ": the link is down (Link detected: no)");
    if (!now->speed_mbps) {
      return FailedPrecondition(Who() +
                                ": ethtool reports \"Speed: Unknown!\" (no link, or a driver "
                                "that reports no speed); link_speed needs a link that is up");
    }
    if (now->supported.empty()) {
      return Unsupported(Who() +
                         ": the driver reports no supported link modes, so no speed can be forced");
    }
    std::vector<uint64_t> speeds;
    for (const auto& mode : now->supported) {
      const uint64_t mbps = ModeSpeed(mode);
      if (mbps && std::find(speeds.begin(), speeds.end(), mbps) == speeds.end())
        speeds.push_back(mbps);
    }
    std::sort(speeds.begin(), speeds.end());
    if (std::find(speeds.begin(), speeds.end(), target_) == speeds.end()) {
      std::string list;
      for (uint64_t mbps : speeds) list += (list.empty() ? "" : ", ") + std::to_string(mbps);
      return Unsupported(Who() + ": no supported link mode runs at " + Mbps(target_) +
                         " (supported speeds in Mb/s: " + list + ")");
    }
    if (*now->speed_mbps <= target_) {
      return FailedPrecondition(Who() + ": the link already runs at " + Mbps(*now->speed_mbps) +
                                ", at or below " + Mbps(target_) +
                                "; the fault would change nothing");
    }
    prior_ = *now;
    captured_ = true;
    resolved_ = NetdevWithRdmaPort(host_.sysfs, ifname_);
    return Status::Ok();
  }

  Json Saved() const override {
    return {{"prior_speed_mbps", prior_.speed_mbps.value_or(0)},
            {"prior_duplex", prior_.duplex},
            {"prior_autoneg", prior_.autoneg.value_or(false)},
            {"supported", prior_.supported},
            {"advertised", prior_.advertised},
            {"resolved", resolved_}};
  }

  Status Load(const Json& saved) override {
    if (!saved.is_object() || !saved.contains("prior_speed_mbps")) return Status::Ok();
    const auto strings = [&](const char* key) -> Result<std::vector<std::string>> {
      const Json& v = saved.value(key, Json::array());
      std::vector<std::string> out;
      for (const auto& e : v.is_array() ? v : Json::array({v})) {
        if (!e.is_string())
          return InvalidArgument(std::string("saved.") + key + ": expected link mode names");
        out.push_back(e.get<std::string>());
      }
      return out;
    };
    auto supported = strings("supported");
    if (!supported.ok()) return supported.status();
    auto advertised = strings("advertised");
    if (!advertised.ok()) return advertised.status();
    const Json& speed = saved["prior_speed_mbps"];
    if (!speed.is_number_unsigned() || speed.get<uint64_t>() == 0)
      return InvalidArgument("saved.prior_speed_mbps: expected Mb/s, got " + DumpJson(speed));
    prior_.has_speed = true;
    prior_.speed_mbps = speed.get<uint64_t>();
    prior_.duplex = saved.value("prior_duplex", "full");
    prior_.autoneg = saved.value("prior_autoneg", true);
    prior_.supported = std::move(*supported);
    prior_.advertised = std::move(*advertised);
    resolved_ = saved.value("resolved", "");
    captured_ = true;
    return Status::Ok();
  }

  Status Apply() override {
    auto r = RunChecked(*host_.runner, ApplyArgv());
    return r.ok() ? Status::Ok() : r.status().Annotate(Who());
  }

  Status Verify() override {
    auto now = Read();
    if (!now.ok()) return now.status();
    if (now->autoneg != false)
      return FailedPrecondition(Who() + ": auto-negotiation is on, expected off");
    if (!now->speed_mbps || now->link_detected == false) {
      return FailedPrecondition(Who() + ": the link is down after forcing " + Mbps(target_) +
                                ": still training, or the link partner does not run " +
                                Mbps(target_) + " with auto-negotiation off");
    }
    if (*now->speed_mbps != target_) {
      return FailedPrecondition(Who() + ": the link runs at " + Mbps(*now->speed_mbps) +
                                ", expected " + Mbps(target_));
    }
    return Status::Ok();
  }

  Status Revert() override {
    if (!captured_) return Status::Ok();  // never captured, so never applied
    auto now = Read();
    if (!now.ok())
      return now.status().code() == StatusCode::kNotFound ? Status::Ok() : now.status();
    if (AsCaptured(*now)) return Status::Ok();  // never applied, or already reverted
    auto r = RunChecked(*host_.runner, RestoreArgv());
    return r.ok() ? Status::Ok() : r.status().Annotate(Who());
  }

  Status VerifyReverted() override {
    if (!captured_) return Status::Ok();
    auto now = Read();
    if (!now.ok()) return now.status();
    if (!AsCaptured(*now)) {
      return FailedPrecondition(Who() + ": auto-negotiation " + OnOff(now->autoneg) +
                                ", advertising " + std::to_string(now->advertised.size()) +
                                " link modes; expected " + OnOff(prior_.autoneg) + " and " +
                                std::to_string(prior_.advertised.size()) + " as found");
    }
    if (!now->speed_mbps)
      return FailedPrecondition(Who() + ": the link is still retraining (Speed: Unknown!)");
    if (*now->speed_mbps != *prior_.speed_mbps) {
      return FailedPrecondition(Who() + ": the link came back at " + Mbps(*now->speed_mbps) +
                                ", expected " + Mbps(*prior_.speed_mbps) + " as found");
    }
    return Status::Ok();
  }

  std::string Target() const override { return ifname_; }
  std::string ResolvedTarget() const override { return resolved_.empty() ? ifname_ : resolved_; }

  std::vector<std::string> Mechanism() const override {
    return {"capture: ethtool " + ifname_, "apply: " + JoinArgv(ApplyArgv()),
            captured_ ? "revert: " + JoinArgv(RestoreArgv())
                      : "revert: ethtool -s " + ifname_ +
                            " autoneg on advertise MODE on|off ... (every supported mode as it "
                            "was advertised), or, where auto-negotiation was off, ethtool -s " +
                            ifname_ + " speed <as found> duplex <as found> autoneg off"};
  }

 private:
  std::string Who() const { return "link_speed " + ifname_; }
  static std::string OnOff(std::optional<bool> b) { return !b ? "unknown" : *b ? "on" : "off"; }

  Result<LinkSettings> Read() {
    const std::vector<std::string> argv = {"ethtool", ifname_};
    auto r = host_.runner->Run(argv, std::chrono::seconds(10));
    if (!r.ok()) return r.status().Annotate(Who());
    if (r->exit_code != 0) {
      std::string err = Trimmed(r->err);
      if (err.find("No such device") != std::string::npos)
        return NotFound(Who() + ": no interface \"" + ifname_ + "\" here");
      err = err.substr(0, err.find('\n'));
      return FailedPrecondition(Who() + ": `" + JoinArgv(argv) + "` exited " +
                                std::to_string(r->exit_code) + ": " + err);
    }
    return ParseEthtool(r->out);
  }

  // The settings Capture saw are back: the same auto-negotiation and, with
  // it on, the same advertised modes; with it off, the same forced speed and
  // duplex (a link down shows no speed: not yet back).
  bool AsCaptured(const LinkSettings& now) const {
    if (now.autoneg != prior_.autoneg) return false;
    if (*prior_.autoneg) return Sorted(now.advertised) == Sorted(prior_.advertised);
    return now.speed_mbps == prior_.speed_mbps && now.duplex == prior_.duplex;
  }

  std::vector<std::string> ApplyArgv() const {
    return {"ethtool", "-s",   ifname_,   "speed", std::to_string(target_),
            "duplex",  "full", "autoneg", "off"};
  }

  std::vector<std::string> RestoreArgv() const {
    if (!*prior_.autoneg) {
      return {"ethtool",
              "-s",
              ifname_,
              "speed",
              std::to_string(*prior_.speed_mbps),
              "duplex",
              prior_.duplex.empty() ? "full" : prior_.duplex,
              "autoneg",
              "off"};
    }
    std::vector<std::string> argv = {"ethtool", "-s", ifname_, "autoneg", "on"};
    if (prior_.advertised.empty()) return argv;
    // Each supported mode on or off as it was advertised; `advertise` takes
    // the rest of the line (ethtool 6.1 reads MODE on|off pairs to the end).
    argv.push_back("advertise");
    std::vector<std::string> modes = prior_.supported;
    for (const auto& m : prior_.advertised)
      if (std::find(modes.begin(), modes.end(), m) == modes.end()) modes.push_back(m);
    for (const auto& m : modes) {
      const bool on = std::find(prior_.advertised.begin(), prior_.advertised.end(), m) !=
                      prior_.advertised.end();
      argv.insert(argv.end(), {m, on ? "on" : "off"});
    }
    return argv;
  }

  Host host_;
  std::string ifname_;
  uint64_t target_;  // Mb/s
  bool captured_ = false;
  LinkSettings prior_;
  std::string resolved_;  // "eth2 (mlx5_1/2 RoCE)", set by Capture
};

// params.speed in Mb/s: 25000, "25000", "25g" (Gb/s) or a rate ("25gbit").
Result<uint64_t> ReadSpeed(ParamReader& p, const Json& params) {
  const std::string form =
      "Mb/s as ethtool takes them (25000), Gb/s with g (\"25g\") or a rate (\"25gbit\")";
  if (!p.Has("speed")) return InvalidArgument("params.speed: required (" + form + ")");
  (void)p.String("speed", std::string());  // marks the key read; its shape is checked here
  const Json& v = params["speed"];
  std::optional<double> mbps;
  if (v.is_number_integer()) {
    mbps = static_cast<double>(v.get<int64_t>());
  } else if (v.is_string()) {
    const std::string text = v.get<std::string>();
    char* end = nullptr;
    const double n = std::strtod(text.c_str(), &end);
    const std::string unit = end ? std::string(end) : "";
    if (end != text.c_str() && unit.empty() &&
        text.find_first_not_of("0123456789") == std::string::npos) {
      mbps = n;
    } else if (end != text.c_str() && (unit == "g" || unit == "G")) {
      mbps = n * 1000;
    } else {
      auto bits = ParseRateBitsPerSec(text);
      if (!bits.ok())
        return InvalidArgument("params.speed: must be " + form + ", not \"" + text + "\"");
      mbps = static_cast<double>(*bits) / 1e6;
    }
  }
  if (!mbps) return InvalidArgument("params.speed: must be " + form + ", not " + DumpJson(v));
  if (*mbps != static_cast<double>(static_cast<uint64_t>(*mbps)) || *mbps < 1 ||
      *mbps > static_cast<double>(kMaxSpeedMbps)) {
    return InvalidArgument("params.speed: " + DumpJson(v) +
                           " is not a whole number of Mb/s in 1.." + std::to_string(kMaxSpeedMbps));
  }
  return static_cast<uint64_t>(*mbps);
}

}  // namespace

Result<std::unique_ptr<Fault>> MakeLinkSpeed(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  auto speed = ReadSpeed(p, params);
  if (!speed.ok()) return speed.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<LinkSpeed>(host, *ifname, *speed));
}

Status ProbeLinkSpeed(const Json& params, Host host) {
  if (auto s = ProbeToolVersion(*host.runner, {"ethtool", "--version"}, "ethtool", "link_speed");
      !s.ok())
    return s;
  return ProbeNetdevInSysfs(host.sysfs, params, "link_speed");
}

}  // namespace fdrill
