#include "harness/cli/inventory_table.h"

#include <algorithm>
#include <map>
#include <vector>

#include "common/core/json.h"
#include "common/core/units.h"

namespace fdrill {

namespace {

using Row = std::vector<std::string>;

// Left-aligned columns two spaces apart, no trailing spaces.
std::string Align(const std::vector<Row>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

std::string Text(const Json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return "-";
  const Json& v = obj[key];
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return DumpJson(v);
}

const Json& List(const Json& obj, const char* key) {
  static const Json kEmpty = Json::array();
  return obj.is_object() && obj.contains(key) && obj[key].is_array() ? obj[key] : kEmpty;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out.empty() ? "-" : out;
}

// 400 -> "400G", 2.5 -> "2.5G"; from rate_gbps.
std::string Gbps(const Json& port) {
  if (!port.contains("rate_gbps") || !port["rate_gbps"].is_number()) return "-";
  if (port["rate_gbps"].is_number_integer())
    return std::to_string(port["rate_gbps"].get<int64_t>()) + "G";
  std::string s = DumpJson(Json(port["rate_gbps"].get<double>()));
  return s + "G";
}

// 100000 -> "100G", 25000 -> "25G", 2500 -> "2.5G", 100 -> "100M".
std::string Mbps(int64_t mbps) {
  if (mbps < 1000) return std::to_string(mbps) + "M";
  if (mbps % 1000 == 0) return std::to_string(mbps / 1000) + "G";
  return std::to_string(mbps / 1000) + "." + std::to_string(mbps % 1000 / 100) + "G";
}

std::string Layer(const std::string& link_layer) {
  if (link_layer == "InfiniBand") return "IB";
  if (link_layer == "Ethernet") return "RoCE";
  return link_layer;
}

std::string Gpus(const Json& node) {
  const Json& gpus = List(node, "gpus");
  const bool nvml_ok = node.value("nvml", "") == "ok";
  if (gpus.empty()) return nvml_ok ? "0" : "-";
  std::vector<std::pair<std::string, int>> models;  // in first-seen order
  for (const auto& g : gpus) {
    std::string name = Text(g, "name");
    auto it =
        std::find_if(models.begin(), models.end(), [&](const auto& m) { return m.first == name; });
    if (it == models.end()) {
      models.emplace_back(name, 1);
    } else {
      ++it->second;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [name, n] : models) parts.push_back(std::to_string(n) + "x " + name);
  return Join(parts, ", ");
}

std::string NvLinks(const Json& node) {
  int up = 0, total = 0;
  for (const auto& g : List(node, "gpus")) {
    for (const auto& l : List(g, "nvlinks")) {
      ++total;
      if (l.value("state", "") == "up") ++up;
    }
  }
  return total == 0 ? "-" : std::to_string(up) + "/" + std::to_string(total);
}

std::string HcaPorts(const Json& node) {
  std::vector<std::string> parts;
  for (const auto& h : List(node, "hcas")) {
    for (const auto& p : List(h, "ports")) {
      parts.push_back(Text(h, "name") + "/" + Text(p, "port") + " " + Text(p, "state") + " " +
                      Gbps(p) + " " + Layer(Text(p, "link_layer")));
    }
  }
  return Join(parts, ", ");
}

std::string Netdevs(const Json& node) {
  std::vector<std::string> parts;
  for (const auto& n : List(node, "netdevs")) {
    std::string speed = "?";
    if (n.value("operstate", "") != "up") {
      speed = "down";
    } else if (n.contains("speed_mbps") && n["speed_mbps"].is_number_integer()) {
      speed = Mbps(n["speed_mbps"].get<int64_t>());
    }
    parts.push_back(Text(n, "name") + " " + speed);
  }
  return Join(parts, ", ");
}

}  // namespace

std::string FormatInventoryTable(const Json& cluster) {
  std::vector<Row> nodes = {{"NODE", "GPUS", "NVLINK", "HCA PORTS", "NETDEVS"}};
  std::vector<Row> ports = {
      {"NODE", "HCA", "PORT", "STATE", "PHYS", "RATE", "LAYER", "LID", "NETDEVS", "NUMA", "FW"}};
  std::vector<std::string> notes;
  for (const auto& node : List(cluster, "nodes")) {
    const std::string name = Text(node, "node");
    if (node.contains("error")) {
      nodes.push_back({name, "-", "-", "-", "-"});
      notes.push_back(name + ": " + Text(node, "error"));
      continue;
    }
    nodes.push_back({name, Gpus(node), NvLinks(node), HcaPorts(node), Netdevs(node)});
    if (node.contains("nvml") && node.value("nvml", "") != "ok") {
      notes.push_back(name + ": NVML: " + Text(node, "nvml"));
    }
    for (const auto& h : List(node, "hcas")) {
      for (const auto& p : List(h, "ports")) {
        std::vector<std::string> netdevs;
        for (const auto& n : List(p, "netdevs")) {
          if (n.is_string()) netdevs.push_back(n.get<std::string>());
        }
        ports.push_back({name, Text(h, "name"), Text(p, "port"), Text(p, "state"),
                         Text(p, "phys_state"), Text(p, "rate"), Text(p, "link_layer"),
                         Text(p, "lid"), Join(netdevs, ","), Text(h, "numa_node"),
                         Text(h, "fw_ver")});
      }
    }
  }
  std::string out = Align(nodes);
  out += "\n";
  out += ports.size() > 1 ? Align(ports) : std::string("(no HCA ports)\n");
  if (!notes.empty()) {
    out += "\n";
    for (const auto& n : notes) out += n + "\n";
  }
  return out;
}

std::string FormatSwitchTable(const Json& cluster) {
  std::vector<Row> rows = {{"SWITCH", "ROLE", "RAIL", "PORTS"}};
  for (const auto& sw : List(cluster, "switches")) {
    std::vector<std::string> ports;
    for (const auto& p : List(sw, "ports")) {
      std::string port = Text(p, "name") + " -> " + Text(p, "to");
      if (p.value("rate_bps", uint64_t{0}) > 0) port += " " + FormatRate(p["rate_bps"]);
      ports.push_back(port);
    }
    rows.push_back({Text(sw, "name"), Text(sw, "role"), Text(sw, "rail"), Join(ports, ", ")});
  }
  return rows.size() > 1 ? Align(rows) : std::string();
}

}  // namespace fdrill
