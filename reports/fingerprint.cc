#include "reports/fingerprint.h"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/core/json.h"

namespace fdrill {

namespace {

using json = nlohmann::json;

std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : DumpJson(v); }

// One node's keys and values.
std::map<std::string, std::string> NodeKeys(const json& node) {
  std::map<std::string, std::string> out;
  const json sw = node.value("software", json::object());
  if (sw.is_object()) {
    for (const char* k : {"kernel", "fdrill"}) {
      if (sw.contains(k)) out[k] = Text(sw[k]);
    }
    for (const char* group : {"modules", "sysctl"}) {
      const json g = sw.value(group, json::object());
      if (!g.is_object()) continue;
      const std::string prefix = std::string(group) == "modules" ? "module " : "sysctl ";
      for (const auto& [k, v] : g.items()) out[prefix + k] = Text(v);
    }
  }
  for (const json& hca : node.value("hcas", json::array())) {
    if (hca.is_object() && hca.contains("fw_ver"))
      out["hca " + hca.value("name", "?") + " fw_ver"] = Text(hca["fw_ver"]);
  }
  for (const json& nd : node.value("netdevs", json::array())) {
    if (nd.is_object() && nd.contains("mtu"))
      out["netdev " + nd.value("name", "?") + " mtu"] = Text(nd["mtu"]);
  }
  if (node.contains("nvml")) out["nvml"] = Text(node["nvml"]);
  return out;
}

std::string Describe(const std::map<std::string, std::vector<std::string>>& values) {
  std::string out;
  for (const auto& [value, nodes] : values)
    out += fmt::format("{}{} on {}", out.empty() ? "" : "; ", value, fmt::join(nodes, ", "));
  return out.empty() ? "(none)" : out;
}

}  // namespace

Result<Fingerprint> ParseFingerprint(std::string_view inventory_json) {
  const json j = json::parse(inventory_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return InvalidArgument("inventory.json: not a JSON object");
  return FingerprintOf(j);
}

Fingerprint FingerprintOf(const json& j) {
  Fingerprint out;
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> nodes;
  std::set<std::string> keys;
  for (const json& node : j.value("nodes", json::array())) {
    if (!node.is_object() || node.contains("error")) continue;
    auto k = NodeKeys(node);
    for (const auto& [key, v] : k) keys.insert(key);
    nodes.push_back({node.value("node", "?"), std::move(k)});
  }
  for (const auto& [name, k] : nodes) {
    for (const std::string& key : keys) {
      auto it = k.find(key);
      out[key][it == k.end() ? "(none)" : it->second].push_back(name);
    }
  }
  return out;
}

void AddLoadedLibraries(std::string_view log, std::string_view tenant, Fingerprint* fingerprint) {
  constexpr std::string_view kPrefix = "# loaded ";
  // A relaunched job's log may hold several runs of lines: the last wins.
  Fingerprint last;
  bool in_run = false;
  while (!log.empty()) {
    const size_t nl = log.find('\n');
    std::string_view line = log.substr(0, nl);
    log.remove_prefix(nl == std::string_view::npos ? log.size() : nl + 1);
    if (!line.starts_with(kPrefix)) {
      in_run = false;
      continue;
    }
    line.remove_prefix(kPrefix.size());
    const size_t on = line.find(" on ");
    const size_t colon = line.find(": ", on == std::string_view::npos ? 0 : on);
    if (on == std::string_view::npos || colon == std::string_view::npos) continue;
    if (!in_run) last.clear();
    in_run = true;
    std::string key = "workload ";
    if (!tenant.empty()) key += std::string(tenant) + " ";
    key += line.substr(0, on);
    std::vector<std::string>& nodes = last[key][std::string(line.substr(colon + 2))];
    std::string_view hosts = line.substr(on + 4, colon - on - 4);
    while (!hosts.empty()) {
      const size_t comma = hosts.find(", ");
      nodes.emplace_back(hosts.substr(0, comma));
      hosts.remove_prefix(comma == std::string_view::npos ? hosts.size() : comma + 2);
    }
  }
  for (auto& [key, values] : last) (*fingerprint)[key] = std::move(values);
}

std::vector<FingerprintDifference> DiffFingerprints(const Fingerprint& a, const Fingerprint& b) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  std::vector<FingerprintDifference> out;
  static const std::map<std::string, std::vector<std::string>> kNone;
  for (const std::string& k : keys) {
    auto ia = a.find(k);
    auto ib = b.find(k);
    const auto& va = ia == a.end() ? kNone : ia->second;
    const auto& vb = ib == b.end() ? kNone : ib->second;
    if (va != vb) out.push_back({k, Describe(va), Describe(vb)});
  }
  return out;
}

}  // namespace fdrill
