#include "agents/counters.h"

#include <sstream>

namespace fdrill {

namespace {

bool Skipped(const std::string& name, const std::string& mgmt) { return name.empty() || name == "lo" || name == mgmt; }


// Adds each root qdisc's drops and overlimits ("<if>.qdisc_drops") to out.
Json WithQdiscs(ProcessRunner& runner, const std::string& mgmt_interface, Json& out) {
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

}  // namespace

bool ParseProcNetDev(const std::string& text, const std::string& mgmt_interface, Json& out) {
  // Inter-|   Receive                                                |  Transmit
  //  face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
  //   fab0:  123 4 0 0 0 0 0 0  567 8 0 0 0 0 0 0
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line) || line.find("Inter-") == std::string::npos) return false;
  if (!std::getline(lines, line)) return false;
  while (std::getline(lines, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) return false;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    std::istringstream fields(line.substr(colon + 1));
    uint64_t v[16];
    for (auto& x : v) {
      if (!(fields >> x)) return false;
    }
    if (Skipped(name, mgmt_interface)) continue;
    const char* keys[] = {"bytes", "packets", "errors", "dropped"};
    for (int i = 0; i < 4; ++i) {
      out[name + ".rx_" + keys[i]] = v[i];
      out[name + ".tx_" + keys[i]] = v[8 + i];
    }
  }
  return true;
}

Result<Json> SampleCounters(ProcessRunner& runner, SysFs* sysfs, const std::string& mgmt_interface) {
  Json out = Json::object();
  if (sysfs != nullptr) {
    auto dev = sysfs->Read("/proc/net/dev");
    if (dev.ok() && ParseProcNetDev(*dev, mgmt_interface, out)) return WithQdiscs(runner, mgmt_interface, out);
    out = Json::object();
  }
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
  return WithQdiscs(runner, mgmt_interface, out);
}

}  // namespace fdrill
