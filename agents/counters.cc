#include "agents/counters.h"

namespace fdrill {

namespace {

bool Skipped(const std::string& name, const std::string& mgmt) { return name.empty() || name == "lo" || name == mgmt; }

}  // namespace

Result<Json> SampleCounters(ProcessRunner& runner, const std::string& mgmt_interface) {
  Json out = Json::object();
  auto links = RunChecked(runner, {"ip", "-s", "-j", "link", "show"});
  if (!links.ok()) return links.status();
  Json parsed = Json::parse(*links, nullptr, /*allow_exceptions=*/false);
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
  auto qdiscs = RunChecked(runner, {"tc", "-s", "-j", "qdisc", "show"});
  if (qdiscs.ok()) {
    Json q = Json::parse(*qdiscs, nullptr, false);
    if (q.is_array()) {
      for (const auto& e : q) {
        const std::string dev = e.value("dev", "");
        if (Skipped(dev, mgmt_interface) || !e.value("root", false)) continue;
        for (const char* key : {"drops", "overlimits"}) {
          if (e.contains(key) && e[key].is_number()) out[dev + ".qdisc_" + key] = e[key];
        }
      }
    }
  }
  return out;
}

}  // namespace fdrill
