// The one list of injectors. Adding a fault kind = one file in injectors/
// (its Make and, when it has one, its Probe), one row here (with the
// declarations above the table), its test file in tests/injectors/, and its
// README row (tests/injectors/readme_faults_test.cc holds the README to this
// table). CMake picks the files up by their names. No self-registering
// statics: they vanish from static libraries.
#include <algorithm>

#include "common/core/did_you_mean.h"
#include "injectors/injector.h"
#include "injectors/params.h"

namespace fdrill {

// Each kind's entry points, defined in its own file (a probe may be
// shared); nothing but this table calls them.
Result<std::unique_ptr<Fault>> MakeLinkRate(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkFlap(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkLoss(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkDown(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeSwitchDown(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakePortLoss(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkPartition(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeIbPortFlap(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeIbPortDisable(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeIbPortWidth(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeIbPortSpeed(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeIbSwitchPort(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeRankPause(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeRankKill(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeDaemonPause(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeCpuHog(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeMemPressure(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeNvlinkBwMode(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeGpuClockLock(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeGpuPowerCap(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkDelay(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeNcclEnv(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeRoceTcRate(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeRocePfc(const Json& params, Host host);
Result<std::unique_ptr<Fault>> MakeLinkSpeed(const Json& params, Host host);

Status ProbeLinkRate(const Json& params, Host host);  // net_probes.cc
Status ProbeLinkFlap(const Json& params, Host host);  // net_probes.cc: link_down, switch_down too
Status ProbeLinkLoss(const Json& params, Host host);  // net_probes.cc
Status ProbePortLoss(const Json& params, Host host);  // net_probes.cc
Status ProbeLinkPartition(const Json& params, Host host);
Status ProbeIbSwitchPort(const Json& params, Host host);
Status ProbeIbPort(const Json& params, Host host);  // ib_port_fault.cc: the four ib_port_* kinds
Status ProbeRanks(const Json& params, Host host);   // rank_pause.cc: rank_pause, rank_kill
Status ProbeMemPressure(const Json& params, Host host);
Status ProbeNvlinkBwMode(const Json& params, Host host);
Status ProbeGpuClockLock(const Json& params, Host host);
Status ProbeGpuPowerCap(const Json& params, Host host);
Status ProbeLinkDelay(const Json& params, Host host);
Status ProbeRoceTcRate(const Json& params, Host host);
Status ProbeRocePfc(const Json& params, Host host);
Status ProbeLinkSpeed(const Json& params, Host host);

const char* ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kInterface:
      return "interface";
    case Scope::kIbPort:
      return "ib_port";
    case Scope::kGpu:
      return "gpu";
    case Scope::kRank:
      return "rank";
    case Scope::kNode:
      return "node";
    case Scope::kNccl:
      return "nccl";
    case Scope::kSwitch:
      return "switch";
  }
  return "node";
}

std::string ReachText(unsigned reach) {
  static const std::pair<unsigned, const char*> kNames[] = {
      {kReachKernelIp, "kernel TCP/IP (incl. IPoIB)"},
      {kReachRoce, "RoCE RDMA"},
      {kReachIbRdma, "InfiniBand RDMA"},
      {kReachNvlink, "NVLink"},
      {kReachGpu, "GPU compute"},
      {kReachProcess, "the node's processes (any transport)"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((reach & bit) == 0) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

const std::vector<InjectorInfo>& Injectors() {
  static const std::vector<InjectorInfo> kInjectors = {
      {"link_rate", Scope::kInterface, kReachKernelIp,
       "cap an interface's egress rate (tc tbf root qdisc; with peers, htb + u32 for those only)",
       "interface, rate (e.g. 100mbit; 8kbit..10tbit), burst (2K..2G, default max(128K, 10ms "
       "of rate)), latency (tbf only, 1ms..10s, default 50ms), peers (optional list of IPv4 "
       "addresses or prefixes: cap only traffic "
       "to them)",
       R"({"interface": "fab0", "rate": "100mbit"})", &MakeLinkRate, &ProbeLinkRate, LinkDown::kNo,
       OnSwitch::kPort},
      {"link_flap", Scope::kInterface, kReachKernelIp | kReachRoce,
       "take an interface down for a while, then up again (ip link)",
       "interface, down (e.g. 3s), count (default 1), period (default 2 x down)",
       R"({"interface": "fab1", "down": "1s"})", &MakeLinkFlap, &ProbeLinkFlap, LinkDown::kFlap,
       OnSwitch::kPort},
      {"link_loss", Scope::kInterface, kReachKernelIp,
       "drop a random share of an interface's packets: egress after the stack, as on the wire "
       "(nftables netdev egress, own table), ingress on arrival (iptables statistic match, own "
       "chain)",
       "interface, percent (0.000001..100), direction (egress|ingress, default egress), peer "
       "(optional IPv4); with TSO/GSO on, egress loss is per 64 KB super-packet: turn tso/gso off "
       "and use ingress for per-packet loss",
       R"({"interface": "fab0", "percent": 5})", &MakeLinkLoss, &ProbeLinkLoss},
      {"link_down", Scope::kInterface, kReachKernelIp | kReachRoce,
       "take an interface down for the fault's whole window (ip link)", "interface",
       R"({"interface": "fab0"})", &MakeLinkDown, &ProbeLinkFlap, LinkDown::kWindow,
       OnSwitch::kPort},
      {"link_partition", Scope::kInterface, kReachKernelIp,
       "drop all traffic to and from a set of peers (iptables DROP, own chain)",
       "peers (list of IPv4 addresses or prefixes), interface (optional: only on it)",
       R"({"peers": ["198.18.0.2"]})", &MakeLinkPartition, &ProbeLinkPartition},
      {"ib_port_flap", Scope::kIbPort, kReachIbRdma | kReachKernelIp,
       "disable an InfiniBand HCA port for a while, then enable it (ibportstate)",
       "device (e.g. mlx5_0), port (default 1), lid (default: sysfs), down (e.g. 3s), count "
       "(default 1), period (default 2 x down), sysfs_root (default /sys/class/infiniband)",
       R"({"device": "mlx5_0", "down": "1s"})", &MakeIbPortFlap, &ProbeIbPort, LinkDown::kFlap},
      {"ib_port_disable", Scope::kIbPort, kReachIbRdma | kReachKernelIp,
       "disable an InfiniBand HCA port for the fault's whole window (ibportstate)",
       "device (e.g. mlx5_0), port (default 1), lid (default: sysfs), sysfs_root (default "
       "/sys/class/infiniband)",
       R"({"device": "mlx5_0"})", &MakeIbPortDisable, &ProbeIbPort, LinkDown::kWindow},
      {"ib_port_width", Scope::kIbPort, kReachIbRdma | kReachKernelIp,
       "narrow an InfiniBand port's link width, then retrain (ibportstate width + reset)",
       "device, port (default 1), lid (default: sysfs), width (1x|2x|4x|8x|12x), sysfs_root",
       R"({"device": "mlx5_0", "width": "1x"})", &MakeIbPortWidth, &ProbeIbPort},
      {"ib_port_speed", Scope::kIbPort, kReachIbRdma | kReachKernelIp,
       "lower an InfiniBand port's lane speed, then retrain (ibportstate speed/espeed + reset)",
       "device, port (default 1), lid (default: sysfs), speed (sdr|ddr|qdr|fdr|edr|hdr|ndr), "
       "sysfs_root",
       R"({"device": "mlx5_0", "speed": "hdr"})", &MakeIbPortSpeed, &ProbeIbPort},
      {"ib_switch_port", Scope::kIbPort, kReachIbRdma | kReachKernelIp,
       "disable (for the fault's window) or flap the switch port facing another node's HCA, "
       "by LID:port from this node's HCA (ibnetdiscover, smpquery, ibportstate)",
       "hca (its NodeDescription, e.g. \"gpu002 mlx5_0\") + port (default 1), or guid (its "
       "port GUID), or switch_lid + switch_port; down, count, period (optional: a flap, as "
       "ib_port_flap); device + local_port (the HCA port sending the SMPs, default the first "
       "ACTIVE one; never the port this node hangs off), sysfs_root",
       R"({"hca": "gpu002 mlx5_0"})", &MakeIbSwitchPort, &ProbeIbSwitchPort, LinkDown::kFlap,
       OnSwitch::kNo, Radius::kFarHca},
      {"rank_pause", Scope::kRank, kReachProcess,
       "stop workload ranks (SIGSTOP), then resume them (SIGCONT); with on/period a straggler",
       "rank (default: every rank on the node), on + period (optional: stopped `on` of every "
       "`period`)",
       R"({"rank": 2})", &MakeRankPause, &ProbeRanks},
      {"rank_kill", Scope::kRank, kReachProcess,
       "kill workload ranks with a signal (a crashed rank; nothing to restore)",
       "rank (default: every rank on the node), signal (KILL|TERM|INT|SEGV|ABRT|BUS, default KILL)",
       R"({"rank": 2})", &MakeRankKill, &ProbeRanks},
      {"daemon_pause", Scope::kNode, kReachProcess,
       "stop a node's scheduler daemon (SIGSTOP: a hung slurmd), then resume it (SIGCONT); "
       "Slurm marks the node DOWN after SlurmdTimeout",
       "daemon (slurmd)", R"({"daemon": "slurmd"})", &MakeDaemonPause, nullptr},
      {"cpu_hog", Scope::kNode, kReachProcess,
       "spin N threads on the node's CPUs (fdrill-burn, own cgroup, dies with the agent)",
       "threads (default 1)", R"({"threads": 2})", &MakeCpuHog, nullptr},
      {"mem_pressure", Scope::kNode, kReachProcess,
       "allocate and touch N bytes, held resident (fdrill-burn, own cgroup, dies with the agent)",
       "size (e.g. 2G; 1M..16T)", R"({"size": "1G"})", &MakeMemPressure, &ProbeMemPressure},
      {"nvlink_bw_mode", Scope::kGpu, kReachNvlink,
       "reduce or turn off NVLink bandwidth (NVML bw mode: node-wide, or one GPU on Blackwell+)",
       "mode (full|off|min|half|3quarter), gpu (optional: that GPU only, per-device API)",
       R"({"mode": "half"})", &MakeNvlinkBwMode, &ProbeNvlinkBwMode},
      {"gpu_clock_lock", Scope::kGpu, kReachGpu,
       "lock a GPU's SM clock into a range (NVML locked clocks, as nvidia-smi -lgc)",
       "gpu (index), min_mhz, max_mhz", R"({"gpu": 1, "min_mhz": 900, "max_mhz": 900})",
       &MakeGpuClockLock, &ProbeGpuClockLock},
      {"gpu_power_cap", Scope::kGpu, kReachGpu,
       "lower a GPU's power management limit (NVML, as nvidia-smi -pl)",
       "gpu (index), watts (within the GPU's allowed range)", R"({"gpu": 0, "watts": 300})",
       &MakeGpuPowerCap, &ProbeGpuPowerCap},
      {"link_delay", Scope::kInterface, kReachKernelIp,
       "delay an interface's packets (tc netem where the kernel has it, else an NFQUEUE delay "
       "line in the agent)",
       "interface, delay (e.g. 20ms; 1us..10s), jitter (default 0, at most delay), direction "
       "(egress|ingress, default egress), peer (optional IPv4); NFQUEUE numbers 64768-65023 are "
       "fdrill's",
       R"({"interface": "fab0", "delay": "20ms"})", &MakeLinkDelay, &ProbeLinkDelay},
      {"nccl_env", Scope::kNccl, kReachNvlink | kReachIbRdma | kReachRoce,
       "restrict NCCL for workloads started on the node from now on (P2P, NVLS, IB HCAs, channels)",
       "p2p_disable (bool), nvls_enable (bool), ib_hca (NCCL_IB_HCA list), max_channels (1-64): "
       "at least one",
       R"({"p2p_disable": true})", &MakeNcclEnv, nullptr},
      {"switch_down", Scope::kSwitch, kReachKernelIp,
       "take every port of an emulated switch down, as a leaf or spine losing power (ip link; "
       "switch: in a scenario)",
       "bridge (default br0)", R"({})", &MakeSwitchDown, &ProbeLinkFlap, LinkDown::kWindow,
       OnSwitch::kWhole},
      {"port_loss", Scope::kInterface, kReachKernelIp,
       "drop a random share of the frames an emulated switch forwards out of one port (nftables "
       "bridge family, own table; switch: in a scenario)",
       "interface (the switch port, e.g. up0), percent (0.000001..100)",
       R"({"interface": "up0", "percent": 5})", &MakePortLoss, &ProbePortLoss, LinkDown::kNo,
       OnSwitch::kPortOnly, Radius::kScope, "link_loss"},
      {"roce_tc_rate", Scope::kInterface, kReachRoce | kReachKernelIp,
       "cap one hardware traffic class's egress rate in the NIC, RoCE included (DCB ETS maxrate: "
       "dcb maxrate)",
       "interface, tc (0-7, required: the TC RoCE's priority maps to), rate (e.g. 25gbit, whole "
       "kbit/s)",
       R"({"interface": "eth2", "tc": 3, "rate": "25gbit"})", &MakeRoceTcRate, &ProbeRoceTcRate},
      {"roce_pfc", Scope::kInterface, kReachRoce,
       "turn priority flow control off (or on) for priorities of a RoCE netdev: RoCE turns lossy "
       "under congestion (dcb pfc)",
       "interface, priorities (0-7 or a list, required; RoCE's is commonly 3), state (off|on, "
       "default off)",
       R"({"interface": "eth2", "priorities": [3]})", &MakeRocePfc, &ProbeRocePfc},
      {"link_speed", Scope::kInterface, kReachKernelIp | kReachRoce,
       "force an Ethernet netdev down to a lower link speed, autoneg off; the link retrains "
       "(ethtool -s)",
       "interface, speed (Mb/s as ethtool: 25000, or 25g / 25gbit; a supported link mode's, "
       "below the current)",
       R"({"interface": "eth2", "speed": 25000})", &MakeLinkSpeed, &ProbeLinkSpeed},
  };
  return kInjectors;
}

const InjectorInfo* FindInjector(std::string_view name) {
  const auto& all = Injectors();
  auto it =
      std::find_if(all.begin(), all.end(), [&](const InjectorInfo& i) { return name == i.name; });
  return it == all.end() ? nullptr : &*it;
}

Result<std::unique_ptr<Fault>> MakeFault(std::string_view kind, const Json& params, Host host) {
  const InjectorInfo* info = FindInjector(kind);
  if (!info) {
    std::set<std::string> names;
    for (const auto& i : Injectors()) names.insert(i.name);
    std::string hint = DidYouMean(std::string(kind), names);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return InvalidArgument("unknown fault kind \"" + std::string(kind) + "\"" +
                           (hint.empty() ? "" : "; " + hint) + " (known: " + list + ")");
  }
  return info->make(params, host);
}

Result<std::unique_ptr<Fault>> RestoreFault(const Json& record, Host host) {
  auto fault = MakeFault(record.value("kind", ""), record.value("params", Json::object()), host);
  if (!fault.ok()) return fault.status();
  if (auto s = (*fault)->Load(record.value("saved", Json::object())); !s.ok()) return s;
  return fault;
}

}  // namespace fdrill
