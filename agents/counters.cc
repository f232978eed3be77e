#include "agents/counters.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <iterator>
#include <sstream>

#include "agents/sysfs_text.h"
#include "agents/tcp_link_retrans.h"
#include "common/core/json.h"
#include "common/host/iproute_net_stack.h"

namespace fdrill {

namespace {

// PortCounters attributes the kernel exposes for every port (IB and RoCE).
constexpr const char* kIbCounters[] = {
    "port_xmit_data",     "port_rcv_data",       "port_xmit_packets", "port_rcv_packets",
    "symbol_error",       "link_error_recovery", "link_downed",       "port_rcv_errors",
    "port_xmit_discards", "port_xmit_wait",
};
// Counted in 4-octet units (PortXmitData / PortRcvData).
bool InFourOctets(const std::string& name) {
  return name == "port_xmit_data" || name == "port_rcv_data";
}

struct NvLinkField {
  unsigned id;
  const char* name;
  unsigned long long scale;  // to the unit the key promises
};
constexpr NvLinkField kNvLinkFields[] = {
    {NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, "tx_bytes", 1024},  // NVML counts KiB
    {NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, "rx_bytes", 1024},
    {NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY, "dl_replay", 1},
    {NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY, "dl_recovery", 1},
    {NVML_FI_DEV_NVLINK_ERROR_DL_CRC, "dl_crc", 1},
};

bool Skipped(const std::string& name, const std::string& mgmt) {
  return name.empty() || name == "lo" || name == mgmt;
}

// Adds each root qdisc's drops and overlimits ("<if>.qdisc_drops") to out.
Json WithQdiscs(ProcessRunner& runner, NetStack* net, const std::string& mgmt_interface,
                Json& out) {
  NetOf stack(net, &runner);
  auto roots = stack->RootCounters();
  if (roots.ok()) {
    for (const auto& r : *roots) {
      if (Skipped(r.dev, mgmt_interface)) continue;
      out[r.dev + ".qdisc_drops"] = r.drops;
      out[r.dev + ".qdisc_overlimits"] = r.overlimits;
    }
  }
  return out;
}

// The transport counters of the node's network namespace that say packets
// were lost somewhere on its paths (a dropped or shaped-away segment is
// retransmitted; a dead peer or link makes the retransmit timer fire):
// /proc/net/snmp "Tcp:" and /proc/net/netstat "TcpExt:" name -> key.
struct TransportCounter {
  const char* section;
  const char* field;
  const char* key;
};
constexpr TransportCounter kTransportCounters[] = {
    {"Tcp:", "RetransSegs", "tcp.retrans_segs"},
    {"Tcp:", "InErrs", "tcp.in_errs"},
    {"TcpExt:", "TCPTimeouts", "tcp.timeouts"},
    {"TcpExt:", "TCPLostRetransmit", "tcp.lost_retransmits"},
};

// "<if>.carrier_changes" for every interface OUT holds counters of: the
// kernel's count of carrier transitions (/sys/class/net/IF/carrier_changes,
// up and down both count), so a flap shows as a rise even when the link
// carried nothing before or after. The agent's sysfs shows its own network
// namespace (fabric/node_enter.cc remounts it on the emulated fabric).
void WithCarrierChanges(SysFs& sysfs, Json& out) {
  std::vector<std::string> interfaces;
  for (const auto& [key, value] : out.items()) {
    if (key.ends_with(".rx_bytes")) interfaces.push_back(key.substr(0, key.size() - 9));
  }
  for (const auto& name : interfaces) {
    auto v = ReadSysInt(sysfs, "/sys/class/net/" + name + "/carrier_changes");
    if (v && *v >= 0) out[name + ".carrier_changes"] = static_cast<uint64_t>(*v);
  }
}

}  // namespace

void ParseProcNetStats(const std::string& text, Json& out) {
  std::istringstream lines(text);
  std::string header, values;
  while (std::getline(lines, header) && std::getline(lines, values)) {
    std::istringstream names(header), numbers(values);
    std::string section, again;
    if (!(names >> section) || !(numbers >> again) || section != again) return;
    std::string name, number;
    while (names >> name && numbers >> number) {
      for (const auto& c : kTransportCounters) {
        if (section != c.section || name != c.field) continue;
        if (auto v = ParseSysInt(number); v && *v >= 0) out[c.key] = static_cast<uint64_t>(*v);
      }
    }
  }
}

bool ParseProcNetDev(const std::string& text, const std::string& mgmt_interface, Json& out) {
  // Inter-|   Receive                                                |  Transmit
  //  face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop
  //  fifo colls carrier compressed
  //   fab0:  123 4 0 0 0 0 0 0  567 8 0 0 0 0 0 0
  // Read in place (views and from_chars): the agent reads it every sample.
  std::string_view rest = text;
  auto next_line = [&rest](std::string_view& line) {
    if (rest.empty()) return false;
    const size_t end = rest.find('\n');
    line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    return true;
  };
  std::string_view line;
  if (!next_line(line) || line.find("Inter-") == std::string_view::npos) return false;
  if (!next_line(line)) return false;
  while (next_line(line)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return false;
    std::string_view name = line.substr(0, colon);
    name.remove_prefix(std::min(name.size(), name.find_first_not_of(' ')));
    std::string_view fields = line.substr(colon + 1);
    uint64_t v[16];
    for (auto& x : v) {
      const size_t start = fields.find_first_not_of(' ');
      if (start == std::string_view::npos) return false;
      fields.remove_prefix(start);
      auto [end, ec] = std::from_chars(fields.data(), fields.data() + fields.size(), x);
      if (ec != std::errc()) return false;
      fields.remove_prefix(static_cast<size_t>(end - fields.data()));
    }
    const std::string dev(name);
    if (Skipped(dev, mgmt_interface)) continue;
    const char* keys[] = {"bytes", "packets", "errors", "dropped"};
    for (int i = 0; i < 4; ++i) {
      out[dev + ".rx_" + keys[i]] = v[i];
      out[dev + ".tx_" + keys[i]] = v[8 + i];
    }
  }
  return true;
}

Result<Json> SampleCounters(ProcessRunner& runner, SysFs* sysfs, const std::string& mgmt_interface,
                            NetStack* net) {
  Json out = Json::object();
  if (sysfs != nullptr) {
    auto dev = sysfs->Read("/proc/net/dev");
    if (dev.ok() && ParseProcNetDev(*dev, mgmt_interface, out)) {
      WithCarrierChanges(*sysfs, out);
      for (const char* file : {"/proc/net/snmp", "/proc/net/netstat"}) {
        if (auto text = sysfs->Read(file); text.ok()) ParseProcNetStats(*text, out);
      }
      return WithQdiscs(runner, net, mgmt_interface, out);
    }
    out = Json::object();
  }
  auto links = RunChecked(runner, {"ip", "-s", "-j", "link", "show"});
  if (!links.ok()) return links.status();
  Json parsed = ParseOutsideJson(*links);
  if (!parsed.is_array()) return Internal("ip -s -j link: not a JSON list");
  for (const auto& l : parsed) {
    const std::string name = l.value("ifname", "");
    if (Skipped(name, mgmt_interface) || !l.contains("stats64")) continue;
    for (const char* dir : {"rx", "tx"}) {
      const Json& s = l["stats64"].value(dir, Json::object());
      for (const char* key : {"bytes", "packets", "errors", "dropped"}) {
        if (s.contains(key) && s[key].is_number()) out[name + "." + dir + "_" + key] = s[key];
      }
    }
  }
  return WithQdiscs(runner, net, mgmt_interface, out);
}

void SampleIbCounters(SysFs& sysfs, const std::string& root, Json& out) {
  auto devices = ListOrNone(sysfs, root);
  if (!devices.ok()) return;
  for (const auto& dev : *devices) {
    auto ports = ListOrNone(sysfs, root + "/" + dev + "/ports");
    if (!ports.ok()) continue;
    for (const auto& [n, entry] : NumberedEntries(*ports)) {
      const std::string dir = root + "/" + dev + "/ports/" + entry;
      const std::string key = "ib/" + dev + "/" + std::to_string(n) + ".";
      for (const char* name : kIbCounters) {
        auto v = ReadSysInt(sysfs, dir + "/counters/" + name);
        if (v && *v >= 0)
          out[key + name] = static_cast<uint64_t>(*v) * (InFourOctets(name) ? 4 : 1);
      }
      auto hw = ListOrNone(sysfs, dir + "/hw_counters");
      if (!hw.ok()) continue;
      for (const auto& name : *hw) {
        if (name == "lifespan" || out.contains(key + name)) continue;
        auto v = ReadSysInt(sysfs, dir + "/hw_counters/" + name);
        if (v && *v >= 0) out[key + name] = static_cast<uint64_t>(*v);
      }
    }
  }
}

void SampleNvLinkCounters(Gpus& nvml, Json& out) {
  auto gpus = nvml.DeviceCount();
  if (!gpus.ok()) return;
  std::vector<Gpus::FieldRequest> asked;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    for (const auto& f : kNvLinkFields) asked.push_back({f.id, link});
  }
  for (unsigned gpu = 0; gpu < *gpus; ++gpu) {
    auto values = nvml.FieldValues(gpu, asked);
    if (!values.ok() || values->size() != asked.size()) continue;
    for (size_t i = 0; i < asked.size(); ++i) {
      if (!(*values)[i].status.ok()) continue;
      const NvLinkField& f = kNvLinkFields[i % std::size(kNvLinkFields)];
      out["gpu" + std::to_string(gpu) + "/nvlink" + std::to_string(asked[i].scope) + "." + f.name] =
          (*values)[i].value * f.scale;
    }
  }
}

Result<Json> SampleTelemetry(ProcessRunner& runner, SysFs* sysfs, const TelemetrySources& sources) {
  auto netdevs = SampleCounters(runner, sysfs, sources.mgmt_interface, sources.net);
  Json out = netdevs.ok() ? std::move(*netdevs) : Json::object();
  if (netdevs.ok() && sources.tcp_links != nullptr)
    sources.tcp_links->Sample(sources.mgmt_interface, out);
  if (sysfs != nullptr) SampleIbCounters(*sysfs, sources.infiniband, out);
  if (sources.gpus != nullptr) SampleNvLinkCounters(*sources.gpus, out);
  if (!netdevs.ok() && out.empty()) return netdevs.status();
  return out;
}

std::chrono::steady_clock::time_point SampleGridPoint(std::chrono::steady_clock::time_point now,
                                                      Duration every, const std::string& node) {
  if (every <= Duration::zero()) return now;
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(every);
  const auto phase = std::chrono::steady_clock::duration(
      static_cast<int64_t>(std::hash<std::string>{}(node) % static_cast<uint64_t>(period.count())));
  auto into = (now.time_since_epoch() - phase) % period;  // negative before the first point
  if (into < into.zero()) into += period;
  return now - into;
}

Result<Duration> ParseTelemetryInterval(std::string_view text) {
  auto d = ParseDuration(text);
  if (!d.ok()) return d.status().Annotate("--telemetry-interval");
  if (*d < kMinTelemetryInterval || *d > kMaxTelemetryInterval) {
    return InvalidArgument(
        "--telemetry-interval " + std::string(text) +
        ": must be from 100ms to 1h (faster floods the controller with samples; slower misses "
        "whole fault windows)");
  }
  return *d;
}

}  // namespace fdrill
