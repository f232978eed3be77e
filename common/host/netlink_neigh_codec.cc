#include "common/host/netlink_neigh_codec.h"

#include <arpa/inet.h>
#include <linux/neighbour.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace fdrill {

namespace {

// ip's names of the NUD states an entry with an lladdr can be in
// (ip/ipneigh.c); PERMANENT first: it wins over any other bit.
constexpr std::pair<uint16_t, const char*> kKeptStates[] = {{NUD_PERMANENT, "PERMANENT"},
                                                            {NUD_REACHABLE, "REACHABLE"},
                                                            {NUD_STALE, "STALE"},
                                                            {NUD_DELAY, "DELAY"},
                                                            {NUD_PROBE, "PROBE"}};

std::string FormatLladdr(std::string_view bytes) {
  std::string out;
  for (unsigned char b : bytes) {
    char hex[4];
    std::snprintf(hex, sizeof(hex), out.empty() ? "%02x" : ":%02x", b);
    out += hex;
  }
  return out;
}

// "02:fd:00:00:01:02" -> its bytes (pairs of hex digits joined by ':');
// empty when it does not parse.
std::vector<unsigned char> ParseLladdr(const std::string& text) {
  std::vector<unsigned char> out;
  for (size_t at = 0; at + 2 <= text.size(); at += 3) {
    const char pair[3] = {text[at], text[at + 1], 0};
    if (!std::isxdigit(static_cast<unsigned char>(pair[0])) ||
        !std::isxdigit(static_cast<unsigned char>(pair[1])))
      return {};
    out.push_back(static_cast<unsigned char>(std::strtoul(pair, nullptr, 16)));
    if (at + 2 == text.size()) return out;
    if (text[at + 2] != ':') return {};
  }
  return {};  // empty, or ends in ':' or half a pair
}

}  // namespace

NlMessage NeighDumpRequest(int ifindex) {
  NlMessage req(RTM_GETNEIGH, 0);
  ndmsg n{};
  n.ndm_family = AF_UNSPEC;
  req.Append(&n, sizeof(n));
  req.PutU32(NDA_IFINDEX, static_cast<uint32_t>(ifindex));
  return req;
}

Result<NlMessage> EncodeNeighReplace(const NetChange& c, int ifindex) {
  unsigned char addr[16];
  int family = AF_INET;
  size_t addr_len = 4;
  if (inet_pton(AF_INET, c.dst.c_str(), addr) != 1) {
    if (inet_pton(AF_INET6, c.dst.c_str(), addr) != 1)
      return InvalidArgument("neighbour \"" + c.dst + "\" is not an IPv4 or IPv6 address");
    family = AF_INET6;
    addr_len = 16;
  }
  const std::vector<unsigned char> lladdr = ParseLladdr(c.lladdr);
  if (lladdr.empty())
    return InvalidArgument("lladdr \"" + c.lladdr + "\" is not a link-layer address");
  NlMessage m(RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE);
  ndmsg n{};
  n.ndm_family = static_cast<uint8_t>(family);
  n.ndm_ifindex = ifindex;
  n.ndm_state = c.permanent ? NUD_PERMANENT : NUD_STALE;
  m.Append(&n, sizeof(n));
  m.Put(NDA_DST, addr, addr_len);
  m.Put(NDA_LLADDR, lladdr.data(), lladdr.size());
  return m;
}

std::optional<Neighbour> DecodeNeighbour(const std::string& payload, int ifindex) {
  ndmsg n{};
  std::string_view attrs;
  if (!SplitMessage(payload, &n, &attrs) || n.ndm_ifindex != ifindex) return std::nullopt;
  if (n.ndm_family != AF_INET && n.ndm_family != AF_INET6) return std::nullopt;
  Neighbour out;
  for (const auto& [bit, name] : kKeptStates) {
    if (n.ndm_state & bit) {
      out.state = name;
      break;
    }
  }
  auto a = ParseAttrs(attrs, NDA_MAX);
  const std::string_view dst = a[NDA_DST].data, lladdr = a[NDA_LLADDR].data;
  const size_t want = n.ndm_family == AF_INET ? 4 : 16;
  if (out.state.empty() || lladdr.empty() || dst.size() != want) return std::nullopt;
  char text[INET6_ADDRSTRLEN];
  if (!inet_ntop(n.ndm_family, dst.data(), text, sizeof(text))) return std::nullopt;
  out.dst = text;
  out.lladdr = FormatLladdr(lladdr);
  return out;
}

}  // namespace fdrill
