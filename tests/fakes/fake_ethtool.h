// FakeEthtool: a ProcessRunner that plays ethtool(8) 6.1 over Ethernet
// netdevs, for link_speed. It answers `ethtool --version`, `ethtool IF` and
// `ethtool -s IF [speed N] [duplex D] [autoneg on|off] [advertise MODE
// on|off ...]`, keeps each netdev's link settings as an mlx5 port does, and
// records every argv.
//
// `ethtool IF` prints as ethtool 6.1's netlink code does (netlink/
// settings.c: dump_link_modes puts one link mode per line under the first,
// indented to its column, a Half/Full pair on one line; "Speed: %uMb/s" or
// "Speed: Unknown!"); tests/injectors/testdata/ethtool-6.1-*.txt hold
// samples, compared by link_speed_test.cc. `-s IF autoneg on` with no
// advertise, speed or duplex advertises every supported mode, as ethtool
// 6.1 does (nl_sset_compat_linkmodes); the driver side follows mlx5
// (en_ethtool.c, mlx5e_ethtool_set_link_ksettings): forcing a speed with
// autoneg off makes the port advertise that speed's modes only. The link comes up at the fastest
// advertised speed the partner also runs (autoneg on), or at the forced
// speed if the partner runs it with autoneg off (`partner_forced`), else
// stays down ("Speed: Unknown!").
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/host/host.h"
#include "tests/fakes/known_program.h"
#include "tests/fakes/next_failures.h"

namespace fdrill {

class FakeEthtool final : public ProcessRunner {
 public:
  struct Port {
    std::vector<std::string> supported;   // in ethtool's (bit) order
    std::vector<std::string> advertised;  // a subset of supported
    bool autoneg = true;
    uint64_t forced_mbps = 0;  // autoneg off: the speed set
    std::string forced_duplex = "full";
    std::vector<uint64_t> partner;         // speeds the link partner negotiates
    std::vector<uint64_t> partner_forced;  // speeds it runs with autoneg off
    bool cable = true;                     // false: no link at all
  };

  // A 100G port in the modes of the kernel's own sample (commit 012ce4dd3102,
  // "ethtool: Extend link modes settings uAPI with lanes"), up at 100G
  // through autoneg; its switch port also runs 25G and 40G forced.
  static Port Port100G() {
    Port p;
    p.supported = {"1000baseKX/Full",   "10000baseKR/Full",  "40000baseCR4/Full",
                   "40000baseSR4/Full", "40000baseLR4/Full", "25000baseCR/Full",
                   "25000baseSR/Full",  "50000baseCR2/Full", "100000baseSR4/Full",
                   "100000baseCR4/Full"};
    p.advertised = p.supported;
    p.partner = {10000, 25000, 40000, 50000, 100000};
    p.partner_forced = {25000, 40000, 100000};
    return p;
  }

  FakeEthtool() { ports["eth2"] = Port100G(); }

  std::map<std::string, Port> ports;
  std::vector<std::vector<std::string>> calls;

  Host host() { return Host{this, nullptr}; }

  void FailNext(std::vector<std::string> prefix, std::string err, int code = 75) {
    failures_.Add(std::move(prefix), std::move(err), code);
  }

  // The `-s` calls: what changed the machine.
  std::vector<std::vector<std::string>> Mutations() const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : calls)
      if (c.size() > 1 && c[1] == "-s") out.push_back(c);
    return out;
  }

  // The speed the link runs at now; 0: down.
  static uint64_t LinkSpeed(const Port& p) {
    if (!p.cable) return 0;
    if (!p.autoneg) {
      return std::find(p.partner_forced.begin(), p.partner_forced.end(), p.forced_mbps) !=
                     p.partner_forced.end()
                 ? p.forced_mbps
                 : 0;
    }
    uint64_t best = 0;
    for (const auto& m : p.advertised) {
      const uint64_t s = ModeSpeed(m);
      if (std::find(p.partner.begin(), p.partner.end(), s) != p.partner.end())
        best = std::max(best, s);
    }
    return best;
  }

  static uint64_t ModeSpeed(const std::string& mode) { return std::stoull(mode); }

  // `ethtool IF`, as ethtool 6.1 prints it for such a port.
  static std::string Show(const std::string& ifname, const Port& p) {
    auto modes = [](const char* label, const std::vector<std::string>& list) {
      std::string out = std::string("\t") + label;
      if (list.empty()) return out + "Not reported\n";
      const std::string indent(std::string(label).size(), ' ');
      for (size_t i = 0; i < list.size(); ++i) out += (i ? "\n\t" + indent : "") + list[i];
      return out + "\n";
    };
    const uint64_t speed = LinkSpeed(p);
    std::string out = "Settings for " + ifname + ":\n";
    out += "\tSupported ports: [ FIBRE ]\n";
    out += modes("Supported link modes:   ", p.supported);
    out += "\tSupported pause frame use: Symmetric\n";
    out += "\tSupports auto-negotiation: Yes\n";
    out += "\tSupported FEC modes: None\t RS\t BASER\n";
    out += modes("Advertised link modes:  ", p.advertised);
    out += "\tAdvertised pause frame use: Symmetric\n";
    out += std::string("\tAdvertised auto-negotiation: ") + (p.autoneg ? "Yes" : "No") + "\n";
    out += "\tAdvertised FEC modes: RS\n";
    out += speed ? "\tSpeed: " + std::to_string(speed) + "Mb/s\n" : "\tSpeed: Unknown!\n";
    // mlx5 reports lanes (cap_link_lanes_supported) while the link is up.
    if (speed)
      out += "\tLanes: " +
             std::string(speed >= 40000 && speed != 50000 ? "4"
                         : speed == 50000                 ? "2"
                                                          : "1") +
             "\n";
    out += speed ? "\tDuplex: Full\n" : "\tDuplex: Unknown! (255)\n";
    out += std::string("\tAuto-negotiation: ") + (p.autoneg ? "on" : "off") + "\n";
    out += "\tPort: FIBRE\n\tPHYAD: 0\n\tTransceiver: internal\n";
    out += "\tSupports Wake-on: d\n\tWake-on: d\n";
    out += "\tCurrent message level: 0x00000004 (4)\n\t\t\t       link\n";
    out += std::string("\tLink detected: ") + (speed ? "yes" : "no") + "\n";
    return out;
  }

  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    calls.push_back(argv);
    ExpectKnownProgram(argv);
    if (auto failed = failures_.Take(argv)) return *failed;
    if (argv.size() == 2 && argv[1] == "--version")
      return ProcessResult{0, "ethtool version 6.1\n", ""};
    const bool set = argv.size() > 2 && argv[1] == "-s";
    const std::string& ifname = set ? argv[2] : argv.size() == 2 ? argv[1] : "";
    auto it = ports.find(ifname);
    if (it == ports.end()) {
      // ethtool 6.1 with no such netdev: each netlink request fails.
      std::string err;
      for (int i = 0; i < (set ? 1 : 5); ++i)
        err += "netlink error: no device matches name (offset 24)\nnetlink error: No such device\n";
      return ProcessResult{75, set ? "" : "No data available\n", err};
    }
    if (!set) return ProcessResult{0, Show(ifname, it->second), ""};
    return Set(it->second, std::vector<std::string>(argv.begin() + 3, argv.end()));
  }

 private:
  static ProcessResult Set(Port& p, const std::vector<std::string>& args) {
    Port next = p;
    std::optional<uint64_t> speed;
    bool advertise = false;
    for (size_t i = 0; i < args.size(); ++i) {
      if (advertise) {  // MODE on|off pairs to the end of the line
        if (i + 1 >= args.size() || (args[i + 1] != "on" && args[i + 1] != "off")) {
          return ProcessResult{
              1, "",
              "ethtool (-s): flag '" + args[i] +
                  "' for parameter 'advertise' is not followed by 'on' or 'off'\n"};
        }
        if (std::find(p.supported.begin(), p.supported.end(), args[i]) == p.supported.end())
          return ProcessResult{75, "", "netlink error: Invalid argument\n"};
        auto& adv = next.advertised;
        adv.erase(std::remove(adv.begin(), adv.end(), args[i]), adv.end());
        if (args[i + 1] == "on") adv.push_back(args[i]);
        ++i;
        continue;
      }
      if (i + 1 >= args.size()) return ProcessResult{1, "", "ethtool (-s): missing value\n"};
      const std::string& key = args[i];
      const std::string& value = args[++i];
      if (key == "speed") {
        speed = std::stoull(value);
      } else if (key == "duplex") {
        next.forced_duplex = value;
      } else if (key == "autoneg") {
        next.autoneg = value == "on";
      } else if (key == "advertise") {
        advertise = true;
        --i;  // value is the first MODE
      } else {
        return ProcessResult{1, "", "ethtool (-s): unknown parameter " + key + "\n"};
      }
    }
    // ethtool 6.1: `autoneg on` with no advertise, speed or duplex asks for
    // every supported mode.
    const auto given = [&](const char* word) {
      return std::find(args.begin(), args.end(), word) != args.end();
    };
    if (next.autoneg && given("autoneg") && !given("advertise") && !given("speed") &&
        !given("duplex"))
      next.advertised = p.supported;
    // Keep advertised in the supported (bit) order.
    std::vector<std::string> ordered;
    for (const auto& m : p.supported)
      if (std::find(next.advertised.begin(), next.advertised.end(), m) != next.advertised.end())
        ordered.push_back(m);
    next.advertised = ordered;
    if (!next.autoneg) {
      const uint64_t forced = speed.value_or(p.forced_mbps);
      std::vector<std::string> modes;
      for (const auto& m : p.supported)
        if (ModeSpeed(m) == forced) modes.push_back(m);
      if (modes.empty()) return ProcessResult{75, "", "netlink error: Invalid argument\n"};
      next.forced_mbps = forced;
      next.advertised = modes;  // mlx5: the forced speed's modes become the admin (advertised) set
    }
    p = next;
    return ProcessResult{0, "", ""};
  }

  NextFailures failures_;
};

}  // namespace fdrill
