#include "injectors/ib_fabric_discovery.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "common/core/did_you_mean.h"

namespace fdrill {

namespace {

std::string TrimBlank(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool KnownNodeType(const std::string& t) { return t == "CA" || t == "SW" || t == "RT"; }

// "SW     2 19 0xb8cef60300a1b3c0" off the front of `in`.
bool ReadPortEnd(std::istringstream& in, IbPortEnd* end) {
  std::string guid;
  if (!(in >> end->type >> end->lid >> end->port >> guid)) return false;
  auto parsed = ParseIbGuid(guid);
  if (!KnownNodeType(end->type) || !parsed.ok() || guid.rfind("0x", 0) != 0) return false;
  end->guid = *parsed;
  return true;
}

std::string RestOf(std::istringstream& in) {
  if (in.eof()) return "";
  auto at = in.tellg();
  return at < 0 ? "" : TrimBlank(in.str().substr(static_cast<size_t>(at)));
}

bool Quoted(const std::string& s) { return s.size() >= 2 && s.front() == '\'' && s.back() == '\''; }

}  // namespace

std::string IbPortEnd::Name() const { return description + "/" + std::to_string(port); }

Result<std::vector<IbPortsReportLine>> ParseIbPortsReport(const std::string& out) {
  std::vector<IbPortsReportLine> report;
  std::istringstream lines(out);
  std::string raw;
  while (std::getline(lines, raw)) {
    const std::string line = TrimBlank(raw);
    if (line.empty()) continue;
    auto bad = [&] {
      return Internal("cannot read ibnetdiscover's ports report line \"" + line +
                      "\" (expected like \"CA 4 1 0x... 4x HDR - SW 2 19 0x... ( 'a' - 'b' )\")");
    };
    IbPortsReportLine entry;
    std::istringstream in(line);
    if (!ReadPortEnd(in, &entry.port) || !(in >> entry.width >> entry.speed)) return bad();
    std::string rest = RestOf(in);
    if (rest.rfind("- ", 0) == 0) {
      std::istringstream peer_in(rest.substr(2));
      IbPortEnd peer;
      if (!ReadPortEnd(peer_in, &peer)) return bad();
      std::string names = RestOf(peer_in);  // ( 'local' - 'peer' )
      const std::string open = "( '", close = "' )", mid = "' - '";
      if (names.size() < open.size() + close.size() || names.rfind(open, 0) != 0 ||
          names.compare(names.size() - close.size(), close.size(), close) != 0) {
        return bad();
      }
      names = names.substr(open.size(), names.size() - open.size() - close.size());
      size_t at = names.find(mid);
      if (at == std::string::npos) return bad();
      entry.port.description = names.substr(0, at);
      peer.description = names.substr(at + mid.size());
      entry.peer = std::move(peer);
    } else {
      if (!Quoted(rest)) return bad();
      entry.port.description = rest.substr(1, rest.size() - 2);
    }
    report.push_back(std::move(entry));
  }
  return report;
}

const IbPortsReportLine* FindIbPortByGuid(const std::vector<IbPortsReportLine>& report,
                                          uint64_t port_guid) {
  for (const auto& line : report) {
    // Every port of a switch shows the switch's node GUID: only CA and RT
    // lines name one port by their GUID.
    if (line.port.type != "SW" && line.port.guid == port_guid) return &line;
  }
  return nullptr;
}

const IbPortsReportLine* FindIbSwitchPort(const std::vector<IbPortsReportLine>& report,
                                          int64_t switch_lid, int64_t port) {
  for (const auto& line : report) {
    if (line.port.type == "SW" && line.port.lid == switch_lid && line.port.port == port)
      return &line;
  }
  return nullptr;
}

std::vector<const IbPortsReportLine*> FindIbCaPorts(const std::vector<IbPortsReportLine>& report,
                                                    const std::string& description) {
  std::vector<const IbPortsReportLine*> out;
  for (const auto& line : report) {
    if (line.port.type == "CA" && line.port.description == description) out.push_back(&line);
  }
  std::sort(out.begin(), out.end(), [](const IbPortsReportLine* a, const IbPortsReportLine* b) {
    return a->port.port < b->port.port;
  });
  return out;
}

std::set<std::string> IbCaDescriptions(const std::vector<IbPortsReportLine>& report) {
  std::set<std::string> out;
  for (const auto& line : report) {
    if (line.port.type == "CA") out.insert(line.port.description);
  }
  return out;
}

std::string FormatIbGuid(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, guid);
  return buf;
}

Result<uint64_t> ParseIbGuid(const std::string& text) {
  std::string hex = TrimBlank(text);
  if (hex.rfind("0x", 0) == 0 || hex.rfind("0X", 0) == 0) {
    hex = hex.substr(2);
  } else if (hex.size() == 19 && hex[4] == ':' && hex[9] == ':' && hex[14] == ':') {
    hex.erase(std::remove(hex.begin(), hex.end(), ':'), hex.end());  // sysfs node_guid
  }
  const bool all_hex =
      !hex.empty() && hex.size() <= 16 && std::all_of(hex.begin(), hex.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c)) != 0;
      });
  if (!all_hex) {
    return InvalidArgument("\"" + TrimBlank(text) +
                           "\" is not a GUID (expected like 0x0002c90300a0b1c1)");
  }
  return static_cast<uint64_t>(std::strtoull(hex.c_str(), nullptr, 16));
}

Result<uint64_t> IbGidPortGuid(const std::string& gid) {
  const std::string text = TrimBlank(gid);
  // Eight groups of four hex digits; the last four are the interface ID.
  if (text.size() != 39 || std::count(text.begin(), text.end(), ':') != 7) {
    return Internal("cannot read GID \"" + text +
                    "\" (expected like fe80:0000:0000:0000:b8ce:f603:0000:0101)");
  }
  auto guid = ParseIbGuid(text.substr(20));
  if (!guid.ok()) return Internal("cannot read the port GUID of GID \"" + text + "\"");
  return guid;
}

// ---- which switch port a fault names ----

std::string IbSwitchPortFound::Name() const {
  return "switch " + FormatIbGuid(guid) + " lid " + std::to_string(lid) + " port " +
         std::to_string(port);
}

namespace {

constexpr char kFromAnotherNode[] =
    "run the fault from another node on the fabric (the fault's node sends the SMPs; "
    "params.hca names the victim)";
constexpr char kHiddenWhenDisabled[] =
    "an HCA whose switch port is already disabled is not discovered: name that port with "
    "params.switch_lid and switch_port";

Status SelfCut(const IbSwitchPortFound& found, const std::string& local_name, uint64_t local_guid) {
  return FailedPrecondition(
      found.Name() + " is where this node's own port " + local_name + " (" +
      FormatIbGuid(local_guid) +
      ") is linked: disabled, it cuts this node off the fabric, and the SMP that would enable it "
      "again would have to cross that very link, so nothing could undo it from here; " +
      kFromAnotherNode);
}

std::string QuotedList(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out.empty() ? "no HCA" : out;
}

// The CA port line the selector's hca or guid names.
Result<const IbPortsReportLine*> FindVictim(const IbLinkSelector& sel,
                                            const std::vector<IbPortsReportLine>& report,
                                            const std::string& from) {
  if (sel.guid) {
    const IbPortsReportLine* line = FindIbPortByGuid(report, *sel.guid);
    if (line) return line;
    return NotFound("params.guid: " + from + " saw no HCA port " + FormatIbGuid(*sel.guid) + " (" +
                    kHiddenWhenDisabled + ")");
  }
  auto named = FindIbCaPorts(report, *sel.hca);
  if (named.empty()) {
    const auto seen = IbCaDescriptions(report);
    const std::string hint = DidYouMean(*sel.hca, seen);
    return NotFound("params.hca: " + from + " saw no HCA \"" + *sel.hca + "\"" +
                    (hint.empty() ? "" : "; " + hint) + " (it saw " + QuotedList(seen) + "; " +
                    kHiddenWhenDisabled + ")");
  }
  std::vector<const IbPortsReportLine*> at_port;
  std::string ports;
  for (const auto* line : named) {
    if (line->port.port == sel.hca_port) at_port.push_back(line);
    ports += (ports.empty() ? "" : ", ") + std::to_string(line->port.port);
  }
  if (at_port.empty()) {
    return NotFound("params.port: " + from + " saw HCA \"" + *sel.hca + "\" with port(s) " + ports +
                    ", not port " + std::to_string(sel.hca_port) + " (" + kHiddenWhenDisabled +
                    ")");
  }
  if (at_port.size() > 1) {
    std::string guids;
    for (const auto* line : at_port)
      guids += (guids.empty() ? "" : ", ") + FormatIbGuid(line->port.guid);
    return FailedPrecondition(
        "params.hca: " + std::to_string(at_port.size()) + " HCA ports are named \"" + *sel.hca +
        "\" port " + std::to_string(sel.hca_port) + " (" + guids + "): give params.guid instead");
  }
  return at_port.front();
}

}  // namespace

Result<IbSwitchPortFound> FindSwitchPortFacing(const IbLinkSelector& sel,
                                               const std::vector<IbPortsReportLine>& report,
                                               const std::string& local_name, uint64_t local_guid) {
  const std::string from = "ibnetdiscover from " + local_name;
  const IbPortsReportLine* own = FindIbPortByGuid(report, local_guid);
  if (!own) {
    return FailedPrecondition(from + " does not list that port itself (GUID " +
                              FormatIbGuid(local_guid) + " from sysfs gids/0)");
  }
  IbSwitchPortFound found;
  if (sel.hca || sel.guid) {
    auto victim = FindVictim(sel, report, from);
    if (!victim.ok()) return victim.status();
    const IbPortsReportLine& v = **victim;
    if (v.port.guid == local_guid) {
      return FailedPrecondition(v.port.Name() + " is this node's own port " + local_name +
                                ", the one the SMPs leave by; " + kFromAnotherNode);
    }
    if (!v.peer || v.peer->type != "SW") {
      return FailedPrecondition(v.port.Name() + " is linked to " +
                                (v.peer ? v.peer->type + " " + v.peer->Name() : "nothing") +
                                ", not to a switch port");
    }
    found = {v.peer->lid, v.peer->port, v.peer->guid, v.port.Name()};
  } else {
    const IbPortsReportLine* sw = FindIbSwitchPort(report, *sel.switch_lid, *sel.switch_port);
    if (!sw) {
      return NotFound("params.switch_lid: " + from + " saw no switch with LID " +
                      std::to_string(*sel.switch_lid) + " and a port " +
                      std::to_string(*sel.switch_port));
    }
    found = {sw->port.lid, sw->port.port, sw->port.guid, ""};
    if (sw->peer && sw->peer->type == "SW") {
      return FailedPrecondition(found.Name() + " leads to switch \"" + sw->peer->description +
                                "\" port " + std::to_string(sw->peer->port) +
                                " (an inter-switch link); only a port facing an HCA is disabled");
    }
    if (sw->peer) found.peer = sw->peer->Name();
    if (sw->peer && sw->peer->guid == local_guid) return SelfCut(found, local_name, local_guid);
  }
  if (own->peer && own->peer->type == "SW" && own->peer->guid == found.guid &&
      own->peer->port == found.port) {
    return SelfCut(found, local_name, local_guid);
  }
  return found;
}

Result<IbSmpPortState> ParseSmpPortInfo(const std::string& out) {
  IbSmpPortState state;
  std::istringstream lines(out);
  std::string raw;
  while (std::getline(lines, raw)) {
    size_t colon = raw.find(':');
    if (colon == std::string::npos || raw[0] == '#') continue;
    const std::string name = raw.substr(0, colon);
    std::string value = raw.substr(colon + 1);
    value.erase(0, value.find_first_not_of('.'));
    value = TrimBlank(value);
    // Only the first of each: ibportstate's output repeats the block after a set.
    if (name == "LinkState" && state.link_state.empty()) state.link_state = value;
    if (name == "PhysLinkState" && state.phys_state.empty()) state.phys_state = value;
  }
  if (state.link_state.empty() || state.phys_state.empty())
    return Internal("smpquery printed no PortInfo LinkState/PhysLinkState");
  return state;
}

}  // namespace fdrill
