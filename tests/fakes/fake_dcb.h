// FakeDcb: a ProcessRunner that plays iproute2's dcb(8) over netdevs with
// (or without) DCB, for roce_tc_rate and roce_pfc. It answers `dcb -V`,
// `dcb -j maxrate|pfc show dev IF`, `dcb maxrate set dev IF tc-maxrate
// TC:RATE ...` and `dcb pfc set dev IF prio-pfc P:on|off ...`, keeps each
// netdev's DCB state as the kernel does (ETS maxrate in kbit/s, rounded as
// mlx5 rounds it; PFC as eight bits), and records every argv.
//
// Its output is what Debian 12's dcb 6.1 prints, byte for byte
// (tests/injectors/testdata/dcb-6.1-*, compared by roce_tc_rate_test.cc),
// errors included, and it converts rates as the version it plays does
// (`version`): before 6.18 the argument's bytes/s land in the kernel's
// kbit/s field unconverted and `show` prints the kernel's kbit/s; from 6.18
// the argument is converted to kbit/s and `show` prints bytes/s
// (roce_netdev.h). FailNext(prefix) makes the next matching command fail.
#pragma once

#include <strings.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/host/host.h"
#include "tests/fakes/fake_host.h"
#include "tests/fakes/known_program.h"
#include "tests/fakes/next_failures.h"

namespace fdrill {

class FakeDcb final : public ProcessRunner {
 public:
  struct Dev {
    bool dcb = true;          // false: no DCB ops ("Operation not supported"), as a veth
    bool has_maxrate = true;  // false: DCB but no ieee_getmaxrate ("Attribute not found")
    bool mlx5_steps = true;   // round caps as mlx5e_dcbnl_ieee_setmaxrate (pre-2025 kernels)
    std::array<uint64_t, 8> maxrate_kbps{};  // the kernel's ieee_maxrate.tc_maxrate
    std::array<bool, 8> pfc{};               // ieee_pfc.pfc_en, bit by bit
    int pfc_cap = 8;
  };

  // eth2: a ConnectX port (mlx5_1 port 2, RoCE) with PFC on for priority 3,
  // no caps; veth0: no DCB. host() gives a sysfs that shows the RDMA port.
  FakeDcb() {
    devs["eth2"].pfc[3] = true;
    devs["veth0"].dcb = false;
    sysfs.files["/sys/class/net/eth2/device/infiniband/mlx5_1/node_guid"] = "0c42:a103:00fa:b001\n";
    sysfs.files["/sys/class/net/eth2/dev_port"] = "1\n";
    sysfs.files["/sys/class/infiniband/mlx5_1/ports/2/link_layer"] = "Ethernet\n";
    sysfs.files["/sys/class/net/veth0/mtu"] = "1500\n";
  }

  std::map<std::string, Dev> devs;
  std::string version = "6.1.0";  // iproute2's, as `dcb -V` prints it
  std::vector<std::vector<std::string>> calls;
  FakeSysFs sysfs;

  Host host() { return Host{this, &sysfs}; }

  void FailNext(std::vector<std::string> prefix, std::string err, int code = 1) {
    failures_.Add(std::move(prefix), std::move(err), code);
  }

  // The `set` calls: what changed the machine.
  std::vector<std::vector<std::string>> Mutations() const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : calls)
      if (c.size() > 2 && c[0] == "dcb" && c[2] == "set") out.push_back(c);
    return out;
  }

  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    calls.push_back(argv);
    ExpectKnownProgram(argv);
    if (auto failed = failures_.Take(argv)) return *failed;
    if (argv.size() == 2 && argv[1] == "-V")
      return ProcessResult{0, "dcb utility, iproute2-" + version + "\n", ""};
    const bool json = argv.size() > 1 && argv[1] == "-j";
    const size_t at = json ? 2 : 1;  // OBJECT show|set dev IF ...
    if (argv.size() < at + 4 || argv[at + 2] != "dev") return Usage(argv);
    const std::string& object = argv[at];
    const std::string& verb = argv[at + 1];
    auto it = devs.find(argv[at + 3]);
    if (it == devs.end()) return Fail("Attribute read: No such device\n", json);
    Dev& dev = it->second;
    if (!dev.dcb) return Fail("Attribute read: Operation not supported\n", json);
    if (object == "maxrate" && !dev.has_maxrate)
      return Fail("Attribute not found: Success\n", json);
    const std::vector<std::string> rest(argv.begin() + static_cast<long>(at) + 4, argv.end());
    if (object == "maxrate" && verb == "show" && json) return Out(MaxrateJson(dev));
    if (object == "pfc" && verb == "show" && json) return Out(PfcJson(dev));
    if (object == "maxrate" && verb == "set" && !rest.empty() && rest[0] == "tc-maxrate")
      return SetMaxrate(dev, rest);
    if (object == "pfc" && verb == "set" && !rest.empty() && rest[0] == "prio-pfc")
      return SetPfc(dev, rest);
    return Usage(argv);
  }

  // True before iproute2 6.18 (roce_netdev.h).
  bool BytesAsKbit() const {
    unsigned major = 0, minor = 0;
    std::sscanf(version.c_str(), "%u.%u", &major, &minor);
    return !(major > 6 || (major == 6 && minor >= 18));
  }

 private:
  static ProcessResult Out(std::string text) { return ProcessResult{0, std::move(text), ""}; }
  // dcb's error exit: 1, one line on stderr; in JSON mode stdout holds the
  // newline of the JSON writer it had opened.
  static ProcessResult Fail(std::string err, bool json) {
    return ProcessResult{1, json ? "\n" : "", std::move(err)};
  }
  static ProcessResult Usage(const std::vector<std::string>& argv) {
    ADD_FAILURE() << "FakeDcb does not play " << JoinArgv(argv);
    return ProcessResult{1, "", "What is that?\n"};
  }

  std::string MaxrateJson(const Dev& dev) const {
    std::string out = "{\"tc_maxrate\":[";
    for (size_t tc = 0; tc < 8; ++tc) {
      const uint64_t shown = BytesAsKbit() ? dev.maxrate_kbps[tc] : dev.maxrate_kbps[tc] * 125;
      out += (tc ? "," : "") + std::to_string(shown);
    }
    return out + "]}\n";
  }

  static std::string PfcJson(const Dev& dev) {
    std::string out = "{\"pfc_cap\":" + std::to_string(dev.pfc_cap) +
                      ",\"macsec_bypass\":false,\"delay\":0,\"prio_pfc\":[";
    for (size_t p = 0; p < 8; ++p)
      out += std::string(p ? "," : "") + (dev.pfc[p] ? "true" : "false");
    return out + "]}\n";
  }

  // iproute2's get_rate64: a number, an optional unit (bit, kbit, mbit,
  // gbit, tbit, Bps ...; case-insensitive), as bytes/s. -1: not a rate.
  static double Rate64Bytes(const std::string& text) {
    char* end = nullptr;
    double bits = std::strtod(text.c_str(), &end);
    if (end == text.c_str()) return -1;
    const std::pair<const char*, double> units[] = {
        {"bit", 1.}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"tbit", 1e12},
        {"Bps", 8.}, {"KBps", 8e3}, {"MBps", 8e6}, {"GBps", 8e9}, {"TBps", 8e12}};
    if (*end != '\0') {
      bool known = false;
      for (const auto& [name, scale] : units) {
        if (strcasecmp(end, name) == 0) {
          bits *= scale;
          known = true;
          break;
        }
      }
      if (!known) return -1;
    }
    return std::floor(bits / 8);
  }

  // What mlx5 keeps of a cap: 100 Mbit/s steps up to 25.5 Gbit/s (at least
  // one), 1 Gbit/s steps above, each in a u8.
  static uint64_t Mlx5Steps(uint64_t kbps) {
    if (kbps == 0) return 0;
    if (kbps < 26'000'000) return std::max<uint64_t>(kbps / 100'000, 1) % 256 * 100'000;
    return kbps / 1'000'000 % 256 * 1'000'000;
  }

  ProcessResult SetMaxrate(Dev& dev, const std::vector<std::string>& rest) {
    std::array<uint64_t, 8> caps = dev.maxrate_kbps;  // dcb reads, changes, writes back
    for (size_t i = 1; i < rest.size(); ++i) {
      const size_t colon = rest[i].find(':');
      const std::string key = rest[i].substr(0, colon);
      const double bytes = colon == std::string::npos ? -1 : Rate64Bytes(rest[i].substr(colon + 1));
      if (bytes < 0) return ProcessResult{1, "", "Invalid mapping " + rest[i] + "\n"};
      const uint64_t kbps =
          BytesAsKbit() ? static_cast<uint64_t>(bytes) : static_cast<uint64_t>(bytes) / 125;
      if (key == "all") {
        caps.fill(kbps);
      } else if (key.size() == 1 && key[0] >= '0' && key[0] <= '7') {
        caps[static_cast<size_t>(key[0] - '0')] = kbps;
      } else {
        return ProcessResult{1, "", "In TC:RATE mapping, TC is expected to be 0..7\n"};
      }
    }
    for (auto& c : caps) c = dev.mlx5_steps ? Mlx5Steps(c) : c;
    dev.maxrate_kbps = caps;
    return Out("");
  }

  static ProcessResult SetPfc(Dev& dev, const std::vector<std::string>& rest) {
    std::array<bool, 8> pfc = dev.pfc;
    for (size_t i = 1; i < rest.size(); ++i) {
      const size_t colon = rest[i].find(':');
      const std::string key = rest[i].substr(0, colon);
      const std::string value = colon == std::string::npos ? "" : rest[i].substr(colon + 1);
      if (value != "on" && value != "off")
        return ProcessResult{1, "", "Invalid pfc mapping " + rest[i] + "\n"};
      if (key == "all") {
        pfc.fill(value == "on");
      } else if (key.size() == 1 && key[0] >= '0' && key[0] <= '7') {
        pfc[static_cast<size_t>(key[0] - '0')] = value == "on";
      } else {
        return ProcessResult{1, "",
                             "In PRIO:PFC mapping, PRIO is expected to be 0..7\nInvalid pfc "
                             "mapping " +
                                 rest[i] + "\n"};
      }
    }
    dev.pfc = pfc;
    return Out("");
  }

  NextFailures failures_;
};

}  // namespace fdrill
