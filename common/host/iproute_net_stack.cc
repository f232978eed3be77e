#include "common/host/iproute_net_stack.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/core/json.h"

namespace fdrill {

namespace {

constexpr auto kTimeout = std::chrono::seconds(5);

Result<Json> RunJson(ProcessRunner& runner, const std::vector<std::string>& argv) {
  auto r = runner.Run(argv, kTimeout);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    std::string err = r->err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return FailedPrecondition("`" + JoinArgv(argv) + "` exited " + std::to_string(r->exit_code) +
                              ": " + err);
  }
  Json j = ParseOutsideJson(r->out);
  if (j.is_discarded() || !j.is_array())
    return Internal("`" + JoinArgv(argv) + "` printed no JSON array");
  return j;
}

// tc's "Cannot find device" as NotFound naming the interface.
Result<Json> RunDevJson(ProcessRunner& runner, const std::vector<std::string>& argv,
                        const std::string& ifname) {
  auto j = RunJson(runner, argv);
  if (!j.ok() && j.status().message().find("Cannot find device") != std::string::npos)
    return NotFound("no interface \"" + ifname + "\" here");
  return j;
}

LinkState FromJson(const Json& link) {
  LinkState s;
  s.name = link.value("ifname", "");
  s.operstate = link.value("operstate", "UNKNOWN");
  s.master = link.value("master", "");
  for (const auto& f : link.value("flags", Json::array())) {
    if (f == "UP") s.admin_up = true;
  }
  return s;
}

}  // namespace

double ParseTcRate(const std::string& text) {
  char unit[16] = "";
  double n = 0;
  if (std::sscanf(text.c_str(), "%lf%15s", &n, unit) < 1) return -1;
  const std::pair<const char*, double> units[] = {
      {"bit", 1}, {"Kbit", 1e3}, {"Mbit", 1e6}, {"Gbit", 1e9}, {"Tbit", 1e12}};
  for (const auto& [name, scale] : units) {
    if (std::string(unit) == name) return n * scale;
  }
  return -1;
}

Result<std::vector<LinkState>> IprouteNetStack::Links() {
  auto j = RunJson(*runner_, {"ip", "-j", "link", "show"});
  if (!j.ok()) return j.status();
  std::vector<LinkState> out;
  for (const auto& link : *j) out.push_back(FromJson(link));
  return out;
}

Result<std::vector<Qdisc>> IprouteNetStack::Qdiscs(const std::string& ifname) {
  auto j = RunDevJson(*runner_, {"tc", "-j", "qdisc", "show", "dev", ifname}, ifname);
  if (!j.ok()) return j.status();
  std::vector<Qdisc> out;
  for (const auto& q : *j) {
    Qdisc d;
    d.kind = q.value("kind", "");
    d.handle = q.value("handle", "");
    d.parent = q.value("root", false) ? "" : q.value("parent", "");
    d.options = q.value("options", Json::object());
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<HtbClass>> IprouteNetStack::HtbClasses(const std::string& ifname) {
  auto text = RunChecked(*runner_, {"tc", "-j", "class", "show", "dev", ifname});
  if (!text.ok()) return text.status();
  std::vector<HtbClass> out;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    char classid[32] = "";
    if (std::sscanf(line.c_str(), "class htb %31s", classid) != 1) continue;
    HtbClass c;
    c.classid = classid;
    size_t r = line.find(" rate ");
    double rate = r == std::string::npos ? -1 : ParseTcRate(line.substr(r + 6));
    c.rate_bits = rate < 0 ? 0 : static_cast<uint64_t>(std::llround(rate));
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<U32Filter>> IprouteNetStack::U32Filters(const std::string& ifname) {
  auto j = RunDevJson(*runner_, {"tc", "-j", "filter", "show", "dev", ifname}, ifname);
  if (!j.ok()) return j.status();
  std::vector<U32Filter> out;
  for (const auto& f : *j) {
    if (f.value("kind", "") != "u32") continue;
    const Json& o = f.value("options", Json::object());
    if (!o.contains("match")) continue;  // u32's hash-table entries carry no key
    const Json& m = o.value("match", Json::object());
    out.push_back(
        {o.value("flowid", ""), m.value("value", ""), m.value("mask", ""), m.value("off", -1)});
  }
  return out;
}

Result<std::vector<RootQdiscCounters>> IprouteNetStack::RootCounters() {
  auto j = RunJson(*runner_, {"tc", "-s", "-j", "qdisc", "show"});
  if (!j.ok()) return j.status();
  std::vector<RootQdiscCounters> out;
  for (const auto& e : *j) {
    if (!e.value("root", false) || !e.contains("drops")) continue;
    RootQdiscCounters c;
    c.dev = e.value("dev", "");
    c.drops = e.value("drops", uint64_t{0});
    c.overlimits = e.value("overlimits", uint64_t{0});
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::string> IprouteNetStack::RouteDevice(const std::string& address) {
  auto j = RunJson(*runner_, {"ip", "-j", "route", "get", address});
  if (!j.ok()) return j.status();
  if (!j->empty() && (*j)[0].is_object() && (*j)[0].contains("dev") && (*j)[0]["dev"].is_string())
    return (*j)[0]["dev"].get<std::string>();
  return Unavailable("`ip -j route get " + address + "` named no device: " + DumpJson(*j));
}

Result<std::vector<std::string>> IprouteNetStack::AddressDevices(const std::string& address) {
  auto j = RunJson(*runner_, {"ip", "-j", "addr", "show", "to", address});
  if (!j.ok()) return j.status();
  std::vector<std::string> out;
  for (const Json& link : *j) {
    if (link.is_object() && link.contains("ifname") && link["ifname"].is_string())
      out.push_back(link["ifname"].get<std::string>());
  }
  return out;
}

Result<std::vector<Neighbour>> IprouteNetStack::Neighbours(const std::string& ifname) {
  auto j = RunDevJson(*runner_, {"ip", "-j", "neigh", "show", "dev", ifname}, ifname);
  if (!j.ok()) return j.status();
  std::vector<Neighbour> out;
  for (const Json& e : *j) {
    if (!e.is_object()) continue;
    Neighbour n{e.value("dst", ""), e.value("lladdr", ""), ""};
    // "state" lists the NUD bits by name (one, in practice); PERMANENT wins.
    const Json states = e.value("state", Json::array());
    for (const char* kept : {"PERMANENT", "REACHABLE", "STALE", "DELAY", "PROBE"}) {
      if (n.state.empty() && states.is_array() &&
          std::find(states.begin(), states.end(), kept) != states.end())
        n.state = kept;
    }
    if (!n.dst.empty() && !n.lladdr.empty() && !n.state.empty()) out.push_back(std::move(n));
  }
  return out;
}

Status IprouteNetStack::Apply(const NetChange& change) {
  auto r = RunChecked(*runner_, change.Argv());
  return r.ok() ? Status::Ok() : r.status();
}

}  // namespace fdrill
