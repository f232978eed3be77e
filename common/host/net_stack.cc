#include "common/host/net_stack.h"

#include <cctype>
#include <cstdio>

namespace fdrill {

namespace {

std::string Us(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(d).count()) + "us";
}

// `tc qdisc replace dev IF root handle H` or `... parent P handle H`.
std::vector<std::string> QdiscAt(const NetChange& c) {
  std::vector<std::string> argv = {"tc", "qdisc", "replace", "dev", c.ifname};
  if (c.parent.empty()) {
    argv.push_back("root");
  } else {
    argv.insert(argv.end(), {"parent", c.parent});
  }
  argv.insert(argv.end(), {"handle", c.handle});
  return argv;
}

}  // namespace

NetChange NetChange::LinkUp(std::string ifname, bool up) {
  NetChange c;
  c.op = up ? Op::kLinkUp : Op::kLinkDown;
  c.ifname = std::move(ifname);
  return c;
}

NetChange NetChange::Tbf(std::string ifname, std::string parent, std::string handle,
                         uint64_t rate_bits, uint64_t burst, Duration latency) {
  NetChange c;
  c.op = Op::kQdiscReplace;
  c.ifname = std::move(ifname);
  c.parent = std::move(parent);
  c.handle = std::move(handle);
  c.kind = "tbf";
  c.rate_bits = rate_bits;
  c.burst = burst;
  c.latency = latency;
  return c;
}

NetChange NetChange::HtbRoot(std::string ifname, std::string parent, std::string handle) {
  NetChange c;
  c.op = Op::kQdiscReplace;
  c.ifname = std::move(ifname);
  c.parent = std::move(parent);
  c.handle = std::move(handle);
  c.kind = "htb";
  return c;
}

NetChange NetChange::Fifo(std::string ifname, std::string parent, std::string handle,
                          std::string kind, uint64_t limit) {
  NetChange c;
  c.op = Op::kQdiscReplace;
  c.ifname = std::move(ifname);
  c.parent = std::move(parent);
  c.handle = std::move(handle);
  c.kind = std::move(kind);
  c.limit = limit;
  return c;
}

NetChange NetChange::Netem(std::string ifname, std::string handle, Duration delay,
                           Duration jitter) {
  NetChange c;
  c.op = Op::kQdiscReplace;
  c.ifname = std::move(ifname);
  c.handle = std::move(handle);
  c.kind = "netem";
  c.delay = delay;
  c.jitter = jitter;
  return c;
}

NetChange NetChange::DeleteRootQdisc(std::string ifname) {
  NetChange c;
  c.op = Op::kRootQdiscDelete;
  c.ifname = std::move(ifname);
  return c;
}

NetChange NetChange::HtbClassRate(std::string ifname, std::string parent, std::string classid,
                                  uint64_t rate_bits, uint64_t burst) {
  NetChange c;
  c.op = Op::kHtbClassReplace;
  c.ifname = std::move(ifname);
  c.parent = std::move(parent);
  c.handle = std::move(classid);
  c.kind = "htb";
  c.rate_bits = rate_bits;
  c.burst = burst;
  return c;
}

NetChange NetChange::U32Dst(std::string ifname, std::string parent, std::string dst,
                            std::string flowid) {
  NetChange c;
  c.op = Op::kU32DstFilterAdd;
  c.ifname = std::move(ifname);
  c.parent = std::move(parent);
  c.handle = std::move(flowid);
  c.kind = "u32";
  c.dst = std::move(dst);
  return c;
}

NetChange NetChange::NeighReplace(std::string ifname, std::string dst, std::string lladdr,
                                  bool permanent) {
  NetChange c;
  c.op = Op::kNeighReplace;
  c.ifname = std::move(ifname);
  c.dst = std::move(dst);
  c.lladdr = std::move(lladdr);
  c.permanent = permanent;
  return c;
}

std::vector<std::string> NetChange::Argv() const {
  const std::string rate = std::to_string(rate_bits) + "bit";
  const std::string bytes = std::to_string(burst);
  switch (op) {
    case Op::kLinkUp:
    case Op::kLinkDown:
      return {"ip", "link", "set", "dev", ifname, op == Op::kLinkUp ? "up" : "down"};
    case Op::kRootQdiscDelete:
      return {"tc", "qdisc", "del", "dev", ifname, "root"};
    case Op::kHtbClassReplace:
      return {"tc",  "class", "replace", "dev",  ifname, "parent", parent, "classid", handle,
              "htb", "rate",  rate,      "ceil", rate,   "burst",  bytes,  "cburst",  bytes};
    case Op::kU32DstFilterAdd:
      return {"tc",   "filter", "add", "dev",   ifname, "parent", parent, "protocol", "ip",
              "prio", "1",      "u32", "match", "ip",   "dst",    dst,    "flowid",   handle};
    case Op::kNeighReplace:
      return {"ip",   "neigh", "replace", dst,   "lladdr",
              lladdr, "dev",   ifname,    "nud", permanent ? "permanent" : "stale"};
    case Op::kQdiscReplace:
      break;
  }
  std::vector<std::string> argv = QdiscAt(*this);
  if (kind == "tbf") {
    argv.insert(
        argv.end(),
        {"tbf", "rate", rate, "burst", bytes, "latency",
         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(latency).count()) +
             "ms"});
  } else if (kind == "htb") {
    argv.insert(argv.end(), {"htb", "default", "0"});
  } else if (kind == "netem") {
    argv.insert(argv.end(), {"netem", "delay", Us(delay), Us(jitter)});
  } else {
    argv.insert(argv.end(), {kind, "limit", std::to_string(limit)});
  }
  return argv;
}

Status ApplyEach(NetStack& net, const std::vector<NetChange>& changes, const std::string& who) {
  for (const auto& c : changes) {
    if (auto s = net.Apply(c); !s.ok()) return s.Annotate(who);
  }
  return Status::Ok();
}

std::string FormatTcHandle(uint32_t handle) {
  char text[24];
  const unsigned major = handle >> 16, minor = handle & 0xffff;
  if (minor == 0) {
    std::snprintf(text, sizeof(text), "%x:", major);
  } else {
    std::snprintf(text, sizeof(text), "%x:%x", major, minor);
  }
  return text;
}

Result<uint32_t> ParseTcHandle(const std::string& text) {
  unsigned major = 0, minor = 0;
  char rest = 0;
  const size_t colon = text.find(':');
  bool ok = colon != std::string::npos && colon > 0 && colon <= 4 && text.size() - colon <= 5;
  if (ok) {
    const std::string minor_text = text.substr(colon + 1);
    ok = std::sscanf(text.substr(0, colon).c_str(), "%x%c", &major, &rest) == 1 &&
         (minor_text.empty() || std::sscanf(minor_text.c_str(), "%x%c", &minor, &rest) == 1);
    for (char ch : text) {
      if (!std::isxdigit(static_cast<unsigned char>(ch)) && ch != ':') ok = false;
    }
  }
  if (!ok)
    return InvalidArgument("\"" + text + "\" is not a tc handle (MAJOR: or MAJOR:MINOR, hex)");
  return (major << 16) | minor;
}

}  // namespace fdrill
