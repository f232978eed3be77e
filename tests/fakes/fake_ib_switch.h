// FakeIbSwitchFabric: an InfiniBand fabric as one node's HCA port sees it,
// for ib_switch_port. As a ProcessRunner it plays `ibnetdiscover -p`,
// `smpquery portinfo` and `ibportstate ... enable|disable` on switch ports;
// `sysfs` holds the local port (state, lid, link_layer, gids/0).
//
// The default fabric is the one tests/injectors/testdata/ was captured from
// (ibsim-2leaf.net, infiniband-diags 44.0 under ibsim): leaf01 (LID 1) and
// leaf02 (LID 2), 40 ports each, linked by ports 39 and 40; gpu001 mlx5_0
// (LID 3, this node's mlx5_0/1) on leaf01 port 1; gpu002 mlx5_0 (LID 4) on
// leaf02 port 19; gpu003 mlx5_0 port 1 (LID 5) on leaf01 port 3, port 2
// (LID 6) on leaf02 port 3.
//
// Output as the tools print it: the ports report with ibnetdiscover.c's
// formats (a test holds it to the captured one, line for line); smpquery's
// captured PortInfo dump with its header and two state lines set from the
// model; ibportstate's captured set output; errors as captured, the
// "iberror" line on stdout (ibdiag_common.c prints it with printf) and the
// "ibwarn" line on stderr.
//   disable  PhysLinkState Disabled, LinkState Down (a real switch; ibsim
//            leaves LinkState Active: set `ibsim_keeps_link_state`); the HCA
//            behind it drops out of discovery.
//   enable   Polling; with `retrains` (default) the link comes up: LinkUp,
//            and Active with a subnet manager, else Initialize.
// Disabling the switch port the local port hangs off cuts this node off, as
// ibsim showed: the disable fails though the port is disabled, every later
// SMP fails, and discovery finds only the local port.
// Every argv is recorded; FailNext(prefix) fails the next matching command.
#pragma once

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/host/host.h"
#include "tests/fakes/fake_host.h"
#include "tests/fakes/known_program.h"
#include "tests/fakes/next_failures.h"

#ifndef FDRILL_SOURCE_DIR
#error "FakeIbSwitchFabric reads tests/injectors/testdata: define FDRILL_SOURCE_DIR"
#endif

namespace fdrill {

// A captured tool output under tests/injectors/testdata/.
inline std::string IbTestdata(const std::string& name) {
  std::ifstream in(std::string(FDRILL_SOURCE_DIR) + "/tests/injectors/testdata/" + name);
  std::stringstream s;
  s << in.rdbuf();
  if (!in) ADD_FAILURE() << "cannot read tests/injectors/testdata/" << name;
  return s.str();
}

class FakeIbSwitchFabric final : public ProcessRunner {
 public:
  using Argv = std::vector<std::string>;
  using SwitchPortKey = std::pair<int64_t, int64_t>;  // switch LID, port
  struct Switch {
    uint64_t guid;
    std::string description;
    int64_t ports;
  };
  struct CaPort {
    int64_t lid;
    int64_t port;
    std::string description;
  };
  struct State {
    std::string link = "Active";
    std::string phys = "LinkUp";
  };
  // What a switch port is linked to: a CA port (by GUID) or a switch port.
  struct Peer {
    uint64_t ca_guid = 0;
    SwitchPortKey sw{0, 0};
  };

  FakeIbSwitchFabric() {
    switches[1] = {0xb8cef60300a1b2c0, "MF0;leaf01:MQM9700/U1", 40};
    switches[2] = {0xb8cef60300a1b3c0, "MF0;leaf02:MQM9700/U1", 40};
    cas[0xb8cef60300000101] = {3, 1, "gpu001 mlx5_0"};
    cas[0xb8cef60300000201] = {4, 1, "gpu002 mlx5_0"};
    cas[0xb8cef60300000301] = {5, 1, "gpu003 mlx5_0"};
    cas[0xb8cef60300000302] = {6, 2, "gpu003 mlx5_0"};
    LinkCa({1, 1}, 0xb8cef60300000101);
    LinkCa({2, 19}, 0xb8cef60300000201);
    LinkCa({1, 3}, 0xb8cef60300000301);
    LinkCa({2, 3}, 0xb8cef60300000302);
    for (int64_t p : {39, 40}) LinkSwitches({1, p}, {2, p});
    SetLocal("mlx5_0", 1, 0xb8cef60300000101);
  }

  std::map<int64_t, Switch> switches;  // by LID
  std::map<uint64_t, CaPort> cas;      // by port GUID
  std::map<SwitchPortKey, Peer> links;
  std::map<SwitchPortKey, State> states;  // linked switch ports
  bool retrains = true;
  bool subnet_manager = true;
  bool ibsim_keeps_link_state = false;
  std::string root = "/sys/class/infiniband";
  FakeSysFs sysfs;
  std::vector<Argv> calls;

  Host host() { return Host{this, &sysfs}; }
  State& state(int64_t lid, int64_t port) { return states.at({lid, port}); }
  // The link of a switch port in Polling comes up (the cable is there).
  void Train(int64_t lid, int64_t port) {
    State& s = states.at({lid, port});
    s.phys = "LinkUp";
    s.link = subnet_manager ? "Active" : "Initialize";
  }

  void LinkCa(SwitchPortKey sw, uint64_t ca_guid) {
    links[sw] = Peer{ca_guid, {0, 0}};
    states[sw] = State{};
  }
  void LinkSwitches(SwitchPortKey a, SwitchPortKey b) {
    links[a] = Peer{0, b};
    links[b] = Peer{0, a};
    states[a] = states[b] = State{};
  }
  // This node's port: DEV/PORT in sysfs is the CA port `guid`, ACTIVE.
  void SetLocal(const std::string& dev, int64_t port, uint64_t guid) {
    local_device_ = dev;
    local_port_ = port;
    local_guid_ = guid;
    const std::string dir = root + "/" + dev + "/ports/" + std::to_string(port);
    char gid[64], lid[16];
    std::snprintf(gid, sizeof(gid), "fe80:0000:0000:0000:%04x:%04x:%04x:%04x",
                  static_cast<unsigned>(guid >> 48), static_cast<unsigned>((guid >> 32) & 0xffff),
                  static_cast<unsigned>((guid >> 16) & 0xffff),
                  static_cast<unsigned>(guid & 0xffff));
    std::snprintf(lid, sizeof(lid), "0x%" PRIx64, cas.at(guid).lid);
    sysfs.SetAttrs(dir, {{"state", "4: ACTIVE"},
                         {"phys_state", "5: LinkUp"},
                         {"lid", lid},
                         {"rate", "200 Gb/sec (4X HDR)"},
                         {"link_layer", "InfiniBand"},
                         {"gids/0", gid}});
  }

  void FailNext(Argv prefix, std::string err, int code = 255) {
    failures_.Add(std::move(prefix), std::move(err), code);
  }

  // ibportstate calls that change a port (all but -V).
  std::vector<Argv> Mutations() const {
    std::vector<Argv> out;
    for (const auto& c : calls) {
      if (!c.empty() && c[0] == "ibportstate" && c.size() > 2) out.push_back(c);
    }
    return out;
  }

  // The ports report as ibnetdiscover.c dump_ports_report prints it.
  std::string PortsReport() const {
    const auto reach = Reachable();
    std::string out;
    for (const auto& [guid, ca] : cas) {
      if (guid != local_guid_ && !reach.cas.count(guid)) continue;
      auto sw = SwitchOfCa(guid);
      const bool up = sw && reach.cas.count(guid);
      out += Line("CA", ca.lid, ca.port, guid, "4x", "HDR");
      out += up ? PeerText("SW", sw->first, sw->second, switches.at(sw->first).guid, ca.description,
                           switches.at(sw->first).description)
                : Alone(ca.description);
    }
    for (const auto& [lid, sw] : switches) {
      if (!reach.switches.count(lid)) continue;
      for (int64_t p = sw.ports; p > 0; --p) {
        auto link = links.find({lid, p});
        const bool linked = link != links.end();
        out += Line("SW", lid, p, sw.guid, "4x", linked ? "HDR" : "SDR");
        if (!linked || states.at({lid, p}).phys != "LinkUp") {
          out += Alone(sw.description);
        } else if (link->second.ca_guid) {
          const CaPort& ca = cas.at(link->second.ca_guid);
          out +=
              PeerText("CA", ca.lid, ca.port, link->second.ca_guid, sw.description, ca.description);
        } else {
          const auto& [plid, pport] = link->second.sw;
          out += PeerText("SW", plid, pport, switches.at(plid).guid, sw.description,
                          switches.at(plid).description);
        }
      }
    }
    return out;
  }

  Result<ProcessResult> Run(const Argv& argv, Duration) override {
    calls.push_back(argv);
    ExpectKnownProgram(argv);
    if (auto failed = failures_.Take(argv)) return *failed;
    const std::string tool = argv.empty() ? "" : argv[0];
    if (tool != "ibnetdiscover" && tool != "smpquery" && tool != "ibportstate")
      return ProcessResult{127, "", "FakeIbSwitchFabric: unexpected command\n"};
    if (argv.size() == 2 && argv[1] == "-V")
      return ProcessResult{0, "", tool + " BUILD VERSION: 44.0\n"};
    size_t at = tool == "ibnetdiscover" ? 2 : 1;  // after "-p"
    if (argv.size() < at + 4 || argv[at] != "-C" || argv[at + 2] != "-P")
      return ProcessResult{255, "", "FakeIbSwitchFabric: expected -C DEV -P PORT\n"};
    if (argv[at + 1] != local_device_ || std::stoll(argv[at + 3]) != local_port_) {
      const std::string who = argv[at + 1] + "' port '" + argv[at + 3];
      return ProcessResult{255,
                           tool == "ibnetdiscover"
                               ? tool + ": iberror: failed: discover failed\n\n"
                               : tool + ": iberror: failed: Failed to open '" + who + "'\n",
                           "ibwarn: [4242] mad_rpc_open_port: can't open UMAD port (" +
                               argv[at + 1] + ":" + argv[at + 3] + ")\n"};
    }
    if (tool == "ibnetdiscover") return ProcessResult{0, PortsReport(), ""};
    at += 4;
    if (tool == "smpquery") {
      if (argv.size() != at + 3 || argv[at] != "portinfo")
        return ProcessResult{255, "", "FakeIbSwitchFabric: expected portinfo LID PORT\n"};
      const int64_t lid = std::stoll(argv[at + 1], nullptr, 0);
      const int64_t port = std::stoll(argv[at + 2], nullptr, 0);
      if (!Answers(lid) || !HasPort(lid, port)) {
        return Timeout(lid,
                       "smpquery: iberror: failed: operation portinfo: port info query failed");
      }
      return ProcessResult{0, PortInfo(lid, port), ""};
    }
    if (argv.size() != at + 3 || (argv[at + 2] != "enable" && argv[at + 2] != "disable"))
      return ProcessResult{255, "", "FakeIbSwitchFabric: expected LID PORT enable|disable\n"};
    const int64_t lid = std::stoll(argv[at], nullptr, 0);
    const int64_t port = std::stoll(argv[at + 1], nullptr, 0);
    if (!Answers(lid) || !HasPort(lid, port))
      return Timeout(lid, "ibportstate: iberror: failed: smp query nodeinfo failed");
    return SetPort(lid, port, argv[at + 2] == "enable");
  }

 private:
  struct Reach {
    std::set<int64_t> switches;
    std::set<uint64_t> cas;
  };

  std::optional<SwitchPortKey> SwitchOfCa(uint64_t guid) const {
    for (const auto& [key, peer] : links) {
      if (peer.ca_guid == guid) return key;
    }
    return std::nullopt;
  }

  // What SMPs from the local port reach: across links whose switch port is LinkUp.
  Reach Reachable() const {
    Reach r;
    auto first = SwitchOfCa(local_guid_);
    if (!first || states.at(*first).phys != "LinkUp") return r;
    std::vector<int64_t> todo = {first->first};
    r.cas.insert(local_guid_);
    while (!todo.empty()) {
      int64_t lid = todo.back();
      todo.pop_back();
      if (!r.switches.insert(lid).second) continue;
      for (const auto& [key, peer] : links) {
        if (key.first != lid || states.at(key).phys != "LinkUp") continue;
        if (peer.ca_guid) r.cas.insert(peer.ca_guid);
        if (!peer.ca_guid) todo.push_back(peer.sw.first);
      }
    }
    return r;
  }
  bool Answers(int64_t switch_lid) const { return Reachable().switches.count(switch_lid) > 0; }
  bool HasPort(int64_t lid, int64_t port) const {
    return switches.count(lid) && port >= 1 && port <= switches.at(lid).ports;
  }
  // A port with nothing linked polls for a peer (iblinkinfo: "Down/ Polling").
  State StateOf(int64_t lid, int64_t port) const {
    auto it = states.find({lid, port});
    return it != states.end() ? it->second : State{"Down", "Polling"};
  }

  static std::string Line(const char* type, int64_t lid, int64_t port, uint64_t guid,
                          const char* width, const char* speed) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%2s %5d %2d 0x%016" PRIx64 " %s %s", type,
                  static_cast<int>(lid), static_cast<int>(port), guid, width, speed);
    return buf;
  }
  static std::string PeerText(const char* type, int64_t lid, int64_t port, uint64_t guid,
                              const std::string& mine, const std::string& theirs) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), " - %2s %5d %2d 0x%016" PRIx64, type, static_cast<int>(lid),
                  static_cast<int>(port), guid);
    return std::string(buf) + " ( '" + mine + "' - '" + theirs + "' )\n";
  }
  static std::string Alone(const std::string& mine) {
    return std::string(36, ' ') + "'" + mine + "'\n";
  }

  static std::string Field(const std::string& name, const std::string& value) {
    return name + ":" + std::string(32 - name.size(), '.') + value;
  }
  // The captured dump, its header and state lines set to this port's.
  std::string PortInfo(int64_t lid, int64_t port) const {
    const State s = StateOf(lid, port);
    std::istringstream in(IbTestdata("smpquery-44.0-portinfo-active.txt"));
    std::string out, line;
    while (std::getline(in, line)) {
      if (line.rfind("# Port info: ", 0) == 0)
        line = "# Port info: Lid " + std::to_string(lid) + " port " + std::to_string(port);
      if (line.rfind("LinkState:", 0) == 0) line = Field("LinkState", s.link);
      if (line.rfind("PhysLinkState:", 0) == 0) line = Field("PhysLinkState", s.phys);
      out += line + "\n";
    }
    return out;
  }
  static ProcessResult Timeout(int64_t lid, const std::string& iberror) {
    return ProcessResult{
        255, iberror + "\n",
        "ibwarn: [4242] mad_rpc: _do_madrpc failed; dport (Lid " + std::to_string(lid) + ")\n"};
  }

  ProcessResult SetPort(int64_t lid, int64_t port, bool enable) {
    State& s = states.emplace(SwitchPortKey{lid, port}, StateOf(lid, port)).first->second;
    const bool own_link = SwitchOfCa(local_guid_) == SwitchPortKey{lid, port};
    std::string out = IbTestdata(enable ? "ibportstate-44.0-switch-enable.txt"
                                        : "ibportstate-44.0-switch-disable.txt");
    const std::string captured = "Lid 2 port 19",
                      here = "Lid " + std::to_string(lid) + " port " + std::to_string(port);
    for (size_t at = out.find(captured); at != std::string::npos;
         at = out.find(captured, at + here.size()))
      out.replace(at, captured.size(), here);
    if (!enable) {
      s.phys = "Disabled";
      if (!ibsim_keeps_link_state) s.link = "Down";
      // The reply crosses the link just disabled: lost (testdata: disable-own-peer).
      if (own_link)
        return ProcessResult{255, IbTestdata("ibportstate-44.0-disable-own-peer.stdout"),
                             IbTestdata("ibportstate-44.0-disable-own-peer.stderr")};
      return ProcessResult{0, out, ""};
    }
    s.phys = "Polling";
    s.link = "Down";
    if (retrains) Train(lid, port);
    return ProcessResult{0, out, ""};
  }

  std::string local_device_;
  int64_t local_port_ = 1;
  uint64_t local_guid_ = 0;
  NextFailures failures_;
};

}  // namespace fdrill
