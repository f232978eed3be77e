// FakeNetKernel: a ProcessRunner that plays the kernel for `ip` and `tc`.
// It keeps per-interface admin state, root qdisc and at most one child qdisc
// (the one under a root tbf's class, as the emulated fabric's switch ports
// have) and neighbour entries, answers the JSON
// queries the network injectors make, applies `ip link set`, `ip neigh
// replace` and `tc qdisc replace|del` to that state, and records every argv.
// As the kernel does, `ip link set dev IF down` flushes IF's neighbours,
// PERMANENT ones too. FailNext(prefix)
// makes the next matching command fail as the real tool would.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/host/host.h"
#include "common/wire/wire.h"
#include "tests/fakes/known_program.h"
#include "tests/fakes/next_failures.h"

namespace fdrill {

class FakeNetKernel final : public ProcessRunner {
 public:
  struct Iface {
    bool up = true;
    std::string qdisc_kind = "noqueue";
    std::string qdisc_handle = "0:";
    Json qdisc_options = Json::object();
    std::vector<std::string>
        classes;  // `tc class show` text lines (iproute2 6.1 prints htb as text under -j)
    Json filters = Json::array();  // `tc -j filter show`
    // The qdisc grafted at `child_parent` ("1:1"), as `tc -j qdisc show`
    // lists it ({"kind", "handle", "parent", "options"}); null: none.
    std::string child_parent;
    Json child;
    std::string master;  // the bridge it is a port of ("br0"); "" for none
    std::string peer;    // a veth's other end; "" for none
    // `ip -j neigh show dev IF`: {"dst", "lladdr", "state": ["STALE"]}, ...
    Json neighbours = Json::array();
  };

  FakeNetKernel() {
    ifaces["lo"] = Iface{};
    ifaces["mgmt0"] = Iface{};
    ifaces["fab0"] = Iface{};
  }

  std::map<std::string, Iface> ifaces;
  // `ip -j route get ADDR` answers dev routes[ADDR], else default_route;
  // `ip -j addr show to ADDR` the interface addresses[ADDR], if any.
  std::map<std::string, std::string> routes;
  std::string default_route = "mgmt0";
  std::map<std::string, std::string> addresses;
  std::vector<std::vector<std::string>> calls;
  bool netem = true;  // false: the kernel lacks sch_netem, as on CI

  // This kernel as a Host's runner; no sysfs.
  Host host() { return Host{this, nullptr}; }

  void FailNext(std::vector<std::string> prefix, std::string err) {
    failures_.Add(std::move(prefix), std::move(err), 2);
  }

  // Calls that change state: everything but the -j queries (`ip -j ...`,
  // and the counters sampler's `ip -s -j link show`).
  std::vector<std::vector<std::string>> Mutations() const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : calls) {
      const bool query = c.size() > 2 && (c[1] == "-j" || (c[1] == "-s" && c[2] == "-j"));
      if (c.size() > 1 && !query) out.push_back(c);
    }
    return out;
  }

  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    calls.push_back(argv);
    ExpectKnownProgram(argv);
    if (auto failed = failures_.Take(argv)) return *failed;
    auto has = [&](size_t i, const char* s) { return argv.size() > i && argv[i] == s; };
    if (has(0, "ip") && has(1, "-j") && has(2, "route") && has(3, "get") && argv.size() == 5) {
      auto it = routes.find(argv[4]);
      const std::string dev = it == routes.end() ? default_route : it->second;
      return ProcessResult{0, Json::array({{{"dst", argv[4]}, {"dev", dev}}}).dump(), ""};
    }
    if (has(0, "ip") && has(1, "-j") && has(2, "addr") && has(3, "show") && has(4, "to") &&
        argv.size() == 6) {
      Json out = Json::array();
      auto it = addresses.find(argv[5]);
      if (it != addresses.end()) out.push_back({{"ifname", it->second}});
      return ProcessResult{0, out.dump(), ""};
    }
    if (has(0, "ip") && has(1, "-j") && has(2, "link")) {
      Json out = Json::array();
      int index = 1;
      for (const auto& [name, i] : ifaces) {
        Json flags = Json::array({"BROADCAST", "MULTICAST"});
        if (i.up) flags.push_back("UP");
        out.push_back({{"ifindex", index++},
                       {"ifname", name},
                       {"flags", flags},
                       {"operstate", i.up ? "UP" : "DOWN"}});
        if (!i.master.empty()) out.back()["master"] = i.master;
      }
      return ProcessResult{0, out.dump(), ""};
    }
    if (has(0, "ip") && has(1, "link") && has(2, "set") && has(3, "dev") && argv.size() == 6) {
      auto it = ifaces.find(argv[4]);
      if (it == ifaces.end()) return NoDevice(argv[4]);
      it->second.up = argv[5] == "up";
      if (!it->second.up) it->second.neighbours = Json::array();  // neigh_ifdown
      return ProcessResult{0, "", ""};
    }
    if (has(0, "ip") && has(1, "-j") && has(2, "neigh") && has(3, "show") && has(4, "dev") &&
        argv.size() == 6) {
      auto it = ifaces.find(argv[5]);
      if (it == ifaces.end()) return NoDevice(argv[5]);
      return ProcessResult{0, it->second.neighbours.dump(), ""};
    }
    // ip neigh replace D lladdr L dev IF nud stale|permanent
    if (has(0, "ip") && has(1, "neigh") && has(2, "replace") && has(4, "lladdr") && has(6, "dev") &&
        has(8, "nud") && argv.size() == 10) {
      auto it = ifaces.find(argv[7]);
      if (it == ifaces.end()) return NoDevice(argv[7]);
      Json& all = it->second.neighbours;
      for (auto e = all.begin(); e != all.end(); ++e) {
        if ((*e)["dst"] == argv[3]) {
          all.erase(e);
          break;
        }
      }
      std::string state = argv[9] == "permanent" ? "PERMANENT" : "STALE";
      all.push_back({{"dst", argv[3]}, {"lladdr", argv[5]}, {"state", Json::array({state})}});
      return ProcessResult{0, "", ""};
    }
    // ip link add A type veth peer name B: both ends, down; ip link del A: both go.
    if (has(0, "ip") && has(1, "link") && has(2, "add") && has(4, "type") && has(5, "veth") &&
        has(6, "peer") && has(7, "name") && argv.size() == 9) {
      if (ifaces.count(argv[3]) || ifaces.count(argv[8]))
        return ProcessResult{2, "", "RTNETLINK answers: File exists\n"};
      ifaces[argv[3]] = Iface{.up = false, .peer = argv[8]};
      ifaces[argv[8]] = Iface{.up = false, .peer = argv[3]};
      return ProcessResult{0, "", ""};
    }
    if (has(0, "ip") && has(1, "link") && has(2, "del") && argv.size() == 4) {
      auto it = ifaces.find(argv[3]);
      if (it == ifaces.end()) return NoDevice(argv[3]);
      std::string peer = it->second.peer;
      ifaces.erase(it);
      if (!peer.empty()) ifaces.erase(peer);
      return ProcessResult{0, "", ""};
    }
    if (has(0, "tc") && has(1, "-j") && has(2, "qdisc") && has(3, "show") && has(4, "dev")) {
      auto it = ifaces.find(argv[5]);
      if (it == ifaces.end()) return NoDevice(argv[5]);
      Json q = {{"kind", it->second.qdisc_kind},
                {"handle", it->second.qdisc_handle},
                {"root", true},
                {"options", it->second.qdisc_options}};
      Json all = Json::array({q});
      if (!has(6, "root") && !it->second.child.is_null()) all.push_back(it->second.child);
      return ProcessResult{0, all.dump(), ""};
    }
    if (has(0, "tc") && has(1, "qdisc") && has(2, "replace") && has(3, "dev") && has(5, "parent")) {
      // tc qdisc replace dev IF parent P handle H KIND ... : grafts under the root tbf's class.
      auto it = ifaces.find(argv[4]);
      if (it == ifaces.end()) return NoDevice(argv[4]);
      Iface& i = it->second;
      if (i.qdisc_kind != "tbf" || argv[6] != i.qdisc_handle + "1")
        return ProcessResult{2, "", "Error: Failed to find specified qdisc.\n"};
      Json options = Json::object();
      const std::string& kind = argv[9];
      if (kind == "bfifo" || kind == "pfifo") {
        options = {{"limit", std::stoull(argv[11])}};
      } else if (kind == "tbf") {
        options = {{"rate", std::stoull(argv[11]) / 8}, {"burst", std::stoull(argv[13])}};
      } else if (kind == "htb") {
        options = {{"r2q", 10}, {"default", "0x" + argv[11]}};
        i.classes.clear();
        i.filters = Json::array();
      }
      i.child_parent = argv[6];
      i.child = {{"kind", kind}, {"handle", argv[8]}, {"parent", argv[6]}, {"options", options}};
      return ProcessResult{0, "", ""};
    }
    if (has(0, "tc") && has(1, "qdisc") && has(2, "replace") && has(3, "dev")) {
      auto it = ifaces.find(argv[4]);
      if (it == ifaces.end()) return NoDevice(argv[4]);
      // tc qdisc replace dev IF root handle H tbf rate Nbit burst B latency L
      // tc qdisc replace dev IF root handle H netem delay Dus Jus
      it->second.qdisc_handle = argv[7];
      it->second.qdisc_kind = argv[8];
      it->second.child = Json();
      if (argv[8] == "htb") {  // tc qdisc replace dev IF root handle H htb default N
        it->second.qdisc_options = {{"r2q", 10}, {"default", "0x" + argv[10]}};
        it->second.classes.clear();
        it->second.filters = Json::array();
        return ProcessResult{0, "", ""};
      }
      if (argv[8] == "netem") {
        if (!netem) return ProcessResult{2, "", "Error: Specified qdisc kind is unknown.\n"};
        // tc -j prints netem's delay and jitter in seconds
        it->second.qdisc_options = {
            {"limit", 1000},
            {"delay",
             {{"delay", std::stod(argv[10]) / 1e6}, {"jitter", std::stod(argv[11]) / 1e6}}}};
        return ProcessResult{0, "", ""};
      }
      uint64_t bits = std::stoull(argv[10]);
      it->second.qdisc_options = {{"rate", bits / 8}, {"burst", std::stoull(argv[12])}};
      return ProcessResult{0, "", ""};
    }
    if (has(0, "tc") && has(1, "-j") && (has(2, "class") || has(2, "filter")) && has(3, "show") &&
        has(4, "dev")) {
      auto it = ifaces.find(argv[5]);
      if (it == ifaces.end()) return NoDevice(argv[5]);
      if (argv[2] == "filter") return ProcessResult{0, it->second.filters.dump(), ""};
      std::string out;
      for (const auto& c : it->second.classes) out += c + "\n";
      return ProcessResult{0, out, ""};
    }
    // tc class replace dev IF parent P classid C htb rate Rbit ceil Rbit burst B cburst B
    if (has(0, "tc") && has(1, "class") && has(2, "replace") && has(3, "dev") && has(9, "htb")) {
      auto it = ifaces.find(argv[4]);
      if (it == ifaces.end()) return NoDevice(argv[4]);
      const bool htb_child = !it->second.child.is_null() && it->second.child["kind"] == "htb";
      if (it->second.qdisc_kind != "htb" && !htb_child)
        return ProcessResult{2, "", "Error: Parent Qdisc doesn't exists.\n"};
      std::string rate = TcRate(std::stoull(argv[11]));
      it->second.classes.push_back("class htb " + argv[8] + " root prio 0 rate " + rate + " ceil " +
                                   rate + " burst 1600b cburst 1600b ");
      return ProcessResult{0, "", ""};
    }
    // tc filter add dev IF parent P protocol ip prio 1 u32 match ip dst A[/L] flowid C
    if (has(0, "tc") && has(1, "filter") && has(2, "add") && has(3, "dev") && has(11, "u32")) {
      auto it = ifaces.find(argv[4]);
      if (it == ifaces.end()) return NoDevice(argv[4]);
      unsigned a = 0, b = 0, c = 0, d = 0, len = 32;
      std::sscanf(argv[15].c_str(), "%u.%u.%u.%u/%u", &a, &b, &c, &d, &len);
      uint32_t mask = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
      char value[9], mask_hex[9];
      std::snprintf(value, sizeof(value), "%08x", ((a << 24) | (b << 16) | (c << 8) | d) & mask);
      std::snprintf(mask_hex, sizeof(mask_hex), "%08x", mask);
      it->second.filters.push_back(
          {{"parent", argv[6]},
           {"protocol", "ip"},
           {"pref", 1},
           {"kind", "u32"},
           {"options",
            {{"flowid", argv[17]},
             {"match", {{"value", value}, {"mask", mask_hex}, {"off", 16}}}}}});
      return ProcessResult{0, "", ""};
    }
    if (has(0, "tc") && has(1, "qdisc") && has(2, "del") && has(3, "dev")) {
      auto it = ifaces.find(argv[4]);
      if (it == ifaces.end()) return NoDevice(argv[4]);
      if (it->second.qdisc_handle == "0:") {
        return ProcessResult{2, "", "Error: Cannot delete qdisc with handle of zero.\n"};
      }
      it->second = Iface{.up = it->second.up, .neighbours = it->second.neighbours};
      return ProcessResult{0, "", ""};
    }
    return ProcessResult{127, "", "FakeNetKernel: unexpected command\n"};
  }

 private:
  // tc's spelling: the largest power of 1000 that divides the rate exactly.
  static std::string TcRate(uint64_t bits) {
    const char* units[] = {"bit", "Kbit", "Mbit", "Gbit", "Tbit"};
    int i = 0;
    while (i < 4 && bits >= 1000 && bits % 1000 == 0) {
      bits /= 1000;
      ++i;
    }
    return std::to_string(bits) + units[i];
  }
  static ProcessResult NoDevice(const std::string& name) {
    return ProcessResult{1, "", "Cannot find device \"" + name + "\"\n"};
  }
  NextFailures failures_;
};

}  // namespace fdrill
