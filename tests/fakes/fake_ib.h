// FakeIbFabric: plays local InfiniBand HCA ports for the ib_port_* injectors,
// as a ProcessRunner (ibportstate) and a sysfs tree (FakeSysFs under
// ROOT/DEV/ports/N). ibportstate commands change the port model, and the
// model rewrites the sysfs files (state, phys_state, rate, lid) the way the
// kernel would, so an injector's Verify observes state, not intent.
//   disable          -> phys 3 Disabled, state 1 DOWN
//   enable / reset   -> the link retrains: widest enabled width, fastest
//                       enabled speed (extended speeds first); phys 5 LinkUp,
//                       state 4 ACTIVE when a subnet manager runs, else 2 INIT
//   width|speed|espeed MASK   -> the enabled mask (0 no change, 255/15/31 all
//                       supported, 30 extended speeds off); masks outside
//                       the supported ones fail as the SMA refuses them
// `query` and every set print PortInfo as libibmad's mad_dump_field does.
// Every argv is recorded; FailNext(prefix) fails the next matching command.
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/host/host.h"
#include "tests/fakes/fake_host.h"
#include "tests/fakes/known_program.h"
#include "tests/fakes/next_failures.h"

namespace fdrill {

class FakeIbFabric final : public ProcessRunner {
 public:
  using Argv = std::vector<std::string>;
  struct Port {
    int64_t lid = 3;
    int state = 4;
    int phys = 5;
    int64_t width_supported = 3, width_enabled = 3;  // 1X or 4X
    int64_t speed_supported = 7, speed_enabled = 7;  // 2.5, 5.0, 10.0 Gbps
    bool extended = true;
    int64_t espeed_supported = 15, espeed_enabled = 15;  // FDR, EDR, HDR, NDR
    bool subnet_manager = true;
    int active_lanes = 4;
    std::string active_speed = "NDR";
  };

  explicit FakeIbFabric(std::string root = "/sys/class/infiniband") : root_(std::move(root)) {
    AddPort("mlx5_0", 1, Port{});
  }

  FakeSysFs sysfs;
  std::vector<Argv> calls;
  bool have_ibportstate = true;

  Host host() { return Host{this, &sysfs}; }
  std::string Dir(const std::string& dev, int n) const {
    return root_ + "/" + dev + "/ports/" + std::to_string(n);
  }

  void AddPort(const std::string& dev, int n, Port p) {
    ports_[{dev, n}] = p;
    sysfs.files[Dir(dev, n) + "/link_layer"] = "InfiniBand\n";
    Sync(dev, n);
  }
  Port& port(const std::string& dev = "mlx5_0", int n = 1) { return ports_.at({dev, n}); }
  // Rewrites the sysfs files from the model; call after changing port() by hand.
  void Sync(const std::string& dev = "mlx5_0", int n = 1) {
    const Port& p = ports_.at({dev, n});
    static const std::map<int, std::string> kState = {
        {1, "1: DOWN"}, {2, "2: INIT"}, {3, "3: ARMED"}, {4, "4: ACTIVE"}};
    static const std::map<int, std::string> kPhys = {
        {2, "2: Polling"}, {3, "3: Disabled"}, {5, "5: LinkUp"}};
    sysfs.files[Dir(dev, n) + "/state"] = kState.at(p.state) + "\n";
    sysfs.files[Dir(dev, n) + "/phys_state"] = kPhys.at(p.phys) + "\n";
    char lid[16];
    std::snprintf(lid, sizeof(lid), "0x%llx\n", static_cast<long long>(p.lid));
    sysfs.files[Dir(dev, n) + "/lid"] = lid;
    sysfs.files[Dir(dev, n) + "/rate"] = Rate(p) + "\n";
  }

  void FailNext(Argv prefix, std::string err, int code = 255) {
    failures_.Add(std::move(prefix), std::move(err), code);
  }

  // ibportstate calls that change the port (all but query and -V).
  std::vector<Argv> Mutations() const {
    std::vector<Argv> out;
    for (const auto& c : calls) {
      if (c.size() > 7 && c.back() != "query") out.push_back(c);
    }
    return out;
  }

  Result<ProcessResult> Run(const Argv& argv, Duration) override {
    calls.push_back(argv);
    ExpectKnownProgram(argv);
    if (auto failed = failures_.Take(argv)) return *failed;
    if (argv.empty() || argv[0] != "ibportstate")
      return ProcessResult{127, "", "FakeIbFabric: unexpected command\n"};
    if (!have_ibportstate) return ProgramMissing("ibportstate");
    if (argv.size() == 2 && argv[1] == "-V")
      return ProcessResult{0, "", "ibportstate BUILD VERSION: 50.0\n"};
    if (argv.size() < 7 || argv[1] != "-C" || argv[3] != "-P")
      return Err("usage: -C DEV -P PORT LID PORT [op]");
    auto it = ports_.find({argv[2], std::stoi(argv[4])});
    if (it == ports_.end()) return Err("Failed to open '" + argv[2] + "' port '" + argv[4] + "'");
    if (std::stoll(argv[5], nullptr, 0) != it->second.lid)
      return Err("can't resolve destination port " + argv[5]);
    auto target = ports_.find({argv[2], std::stoi(argv[6])});
    if (target == ports_.end()) return Err("smp query portinfo failed");
    Port& p = target->second;

    std::string op;
    int64_t width = 0, speed = 0, espeed = 0;
    for (size_t i = 7; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      if (a == "query" || a == "enable" || a == "disable" || a == "reset") {
        if (!op.empty())
          return Err(
              a +
              " only one of: query, enable, disable, reset, down, arm, active, can be specified");
        op = a;
        continue;
      }
      if (a != "width" && a != "speed" && a != "espeed") return Err("invalid operation: " + a);
      if (++i >= argv.size()) return Err(a + " requires an additional parameter");
      int64_t v = std::stoll(argv[i], nullptr, 0);
      if (a == "speed" && v > 15) return Err("invalid speed value " + argv[i]);
      if (a == "espeed" && v > 31) return Err("invalid extended speed value " + argv[i]);
      if (a == "width" && v > 31 && v != 255) return Err("invalid width value " + argv[i]);
      (a == "width" ? width : a == "speed" ? speed : espeed) = v;
    }
    bool set = (!op.empty() && op != "query") || width || speed || espeed;
    if (!set) return ProcessResult{0, "CA PortInfo:\n" + Dump(p, std::stoi(argv[6])), ""};

    std::string out = "Initial CA/RT PortInfo:\n" + Dump(p, std::stoi(argv[6]));
    Port next = p;
    // v: the written mask; every_supported: the value meaning "all supported".
    auto apply = [](int64_t v, int64_t every_supported, int64_t supported, int64_t& field,
                    bool ext = false) {
      if (v == 0) return true;  // no state change
      if (v == every_supported) v = supported;
      if (!(ext && v == 30) && (v & ~supported)) return false;  // espeed 30: extended speeds off
      field = v;
      return true;
    };
    if (!apply(width, 255, p.width_supported, next.width_enabled))
      return Err("smp set portinfo failed");
    if (!apply(speed, 15, p.speed_supported, next.speed_enabled))
      return Err("smp set portinfo failed");
    if (espeed &&
        (!p.extended || !apply(espeed, 31, p.espeed_supported, next.espeed_enabled, true))) {
      return Err("smp set portinfo failed");
    }
    if (op == "disable") {
      out += "Disable may be irreversible\n";
      next.phys = 3;
      next.state = 1;
    } else if (op == "enable" || op == "reset") {
      Train(next);
    }
    p = next;
    Sync(argv[2], std::stoi(argv[6]));
    out += "\nAfter PortInfo set:\n" + Dump(p, std::stoi(argv[6]));
    return ProcessResult{0, out, ""};
  }

 private:
  static ProcessResult Err(const std::string& what) {
    return ProcessResult{255, "", "ibportstate: iberror: failed: " + what + "\n"};
  }

  static void Train(Port& p) {
    static const std::vector<std::pair<int64_t, int>> kWidths = {
        {8, 12}, {4, 8}, {2, 4}, {16, 2}, {1, 1}};
    static const std::vector<std::pair<int64_t, std::string>> kExt = {
        {8, "NDR"}, {4, "HDR"}, {2, "EDR"}, {1, "FDR"}};
    static const std::vector<std::pair<int64_t, std::string>> kLegacy = {
        {4, "QDR"}, {2, "DDR"}, {1, "SDR"}};
    p.active_lanes = 0;
    p.active_speed.clear();
    for (auto [bit, lanes] : kWidths) {
      if (p.width_enabled & p.width_supported & bit) {
        p.active_lanes = lanes;
        break;
      }
    }
    if (p.extended && p.espeed_enabled != 30) {
      for (const auto& [bit, name] : kExt) {
        if (p.espeed_enabled & p.espeed_supported & bit) {
          p.active_speed = name;
          break;
        }
      }
    }
    if (p.active_speed.empty()) {
      for (const auto& [bit, name] : kLegacy) {
        if (p.speed_enabled & p.speed_supported & bit) {
          p.active_speed = name;
          break;
        }
      }
    }
    bool up = p.active_lanes && !p.active_speed.empty();
    p.phys = up ? 5 : 2;
    p.state = !up ? 1 : p.subnet_manager ? 4 : 2;
  }

  // drivers/infiniband/core/sysfs.c rate_show: "%d%s Gb/sec (%dX %s)"
  static std::string Rate(const Port& p) {
    static const std::map<std::string, int> kTenths = {{"SDR", 25},  {"DDR", 50},  {"QDR", 100},
                                                       {"FDR", 140}, {"EDR", 250}, {"HDR", 500},
                                                       {"NDR", 1000}};
    int tenths = kTenths.count(p.active_speed) ? kTenths.at(p.active_speed) * p.active_lanes : 25;
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%d%s Gb/sec (%dX %s)", tenths / 10, tenths % 10 ? ".5" : "",
                  p.active_lanes, p.active_speed.empty() ? "SDR" : p.active_speed.c_str());
    return buf;
  }

  // libibmad dump.c: "A or B", "undefined (N)" for values it cannot name.
  static std::string List(int64_t mask, const std::vector<std::pair<int64_t, std::string>>& bits,
                          int64_t max) {
    if (mask == 0 || mask > max) return "undefined (" + std::to_string(mask) + ")";
    std::string out;
    for (const auto& [bit, name] : bits) {
      if (mask & bit) out += (out.empty() ? "" : " or ") + name;
    }
    return out;
  }
  static std::string Field(const std::string& name, const std::string& value) {
    return name + ":" + std::string(name.size() < 32 ? 32 - name.size() : 0, '.') + value + "\n";
  }

  static std::string Dump(const Port& p, int portnum) {
    static const std::vector<std::pair<int64_t, std::string>> kW = {
        {1, "1X"}, {2, "4X"}, {4, "8X"}, {8, "12X"}, {16, "2X"}};
    static const std::vector<std::pair<int64_t, std::string>> kS = {
        {1, "2.5 Gbps"}, {2, "5.0 Gbps"}, {4, "10.0 Gbps"}};
    static const std::vector<std::pair<int64_t, std::string>> kE = {
        {1, "14.0625 Gbps"}, {2, "25.78125 Gbps"}, {4, "53.125 Gbps"}, {8, "106.25 Gbps"}};
    static const std::map<int, std::string> kState = {
        {1, "Down"}, {2, "Initialize"}, {3, "Armed"}, {4, "Active"}};
    static const std::map<int, std::string> kPhys = {
        {2, "Polling"}, {3, "Disabled"}, {5, "LinkUp"}};
    static const std::map<int, int64_t> kLaneBit = {{1, 1}, {2, 16}, {4, 2}, {8, 4}, {12, 8}};
    static const std::map<std::string, int64_t> kExtBit = {
        {"FDR", 1}, {"EDR", 2}, {"HDR", 4}, {"NDR", 8}};
    static const std::map<std::string, std::string> kLegacyName = {
        {"SDR", "2.5 Gbps"}, {"DDR", "5.0 Gbps"}, {"QDR", "10.0 Gbps"}};
    auto speed_list = [&](int64_t m) {
      std::string s = List(m, kS, 7);
      return (m == 1 || m == 3 || m == 5 || m == 7 || m == 0 || m > 7) ? s : s + " (IBA extension)";
    };
    auto ext_list = [&](int64_t m) {
      if (m == 0) return std::string("0");
      if (m == 30) return std::string("Extended link speeds disabled");
      return List(m, kE, 15);
    };
    bool ext_active = kExtBit.count(p.active_speed) > 0;
    std::string out =
        "# Port info: Lid " + std::to_string(p.lid) + " port " + std::to_string(portnum) + "\n";
    out += Field("LinkState", kState.at(p.state));
    out += Field("PhysLinkState", kPhys.at(p.phys));
    out += Field("Lid", std::to_string(p.lid));
    out += Field("SMLid", "1");
    out += Field("LMC", "0");
    out += Field("LinkWidthSupported", List(p.width_supported, kW, 31));
    out += Field("LinkWidthEnabled", List(p.width_enabled, kW, 31));
    out += Field("LinkWidthActive", kLaneBit.count(p.active_lanes)
                                        ? List(kLaneBit.at(p.active_lanes), kW, 31)
                                        : "undefined (0)");
    out += Field("LinkSpeedSupported", speed_list(p.speed_supported));
    out += Field("LinkSpeedEnabled", speed_list(p.speed_enabled));
    out += Field("LinkSpeedActive", ext_active ? "Extended speed"
                                    : kLegacyName.count(p.active_speed)
                                        ? kLegacyName.at(p.active_speed)
                                        : "undefined (0)");
    if (p.extended) {
      out += Field("LinkSpeedExtSupported", ext_list(p.espeed_supported));
      out += Field("LinkSpeedExtEnabled", ext_list(p.espeed_enabled));
      out += Field("LinkSpeedExtActive",
                   ext_active ? List(kExtBit.at(p.active_speed), kE, 15) : "No Extended Speed");
    }
    out += Field("Mkey", "<not displayed>");
    out += Field("MkeyLeasePeriod", "0");
    out += Field("ProtectBits", "0");
    return out;
  }

  std::string root_;
  std::map<std::pair<std::string, int>, Port> ports_;
  NextFailures failures_;
};

}  // namespace fdrill
