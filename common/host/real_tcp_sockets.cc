// RealTcpSockets: sock_diag(7) over NETLINK_SOCK_DIAG and getifaddrs(3).
// Only <linux/tcp.h> names struct tcp_info here (netinet/tcp.h declares
// another one), so this file builds alone (harness/CMakeLists.txt).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/host/tcp_sockets.h"

namespace fdrill {

namespace {

// Every TCP state but LISTEN (tcp_states.h: TCP_ESTABLISHED = 1 ...
// TCP_CLOSING = 11; LISTEN = 10): a listener retransmits nothing.
constexpr uint32_t kStates = 0xFFF & ~(1u << 10);

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string Address(int family, const uint32_t* raw) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (inet_ntop(family, raw, text, sizeof(text)) == nullptr) return "";
  return text;
}

Status Errno(const char* what) { return Internal(std::string(what) + ": " + std::strerror(errno)); }

// One SOCK_DIAG_BY_FAMILY dump of FAMILY's TCP sockets into OUT.
Status Dump(int family, std::vector<TcpSocket>& out) {
  Fd fd(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (fd.get() < 0) return Errno("socket(NETLINK_SOCK_DIAG)");
  struct {
    nlmsghdr header;
    inet_diag_req_v2 body;
  } request{};
  request.header.nlmsg_len = sizeof(request);
  request.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.body.sdiag_family = static_cast<uint8_t>(family);
  request.body.sdiag_protocol = IPPROTO_TCP;
  request.body.idiag_states = kStates;
  request.body.idiag_ext = 1 << (INET_DIAG_INFO - 1);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd.get(), &request, sizeof(request), 0, reinterpret_cast<sockaddr*>(&kernel),
             sizeof(kernel)) < 0) {
    return Errno("sock_diag request");
  }
  alignas(nlmsghdr) char buffer[32768];
  for (;;) {
    const ssize_t n = recv(fd.get(), buffer, sizeof(buffer), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("sock_diag reply");
    }
    if (n == 0) return Internal("sock_diag reply: the kernel closed the socket");
    int left = static_cast<int>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(h, left);
         h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_type == NLMSG_DONE) return Status::Ok();
      if (h->nlmsg_type == NLMSG_ERROR) {
        const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
        // A kernel without IPv6 answers the AF_INET6 dump with an error:
        // no sockets of that family.
        if (family == AF_INET6 && (e->error == -ENOENT || e->error == -EAFNOSUPPORT))
          return Status::Ok();
        return Internal(std::string("sock_diag: ") + std::strerror(-e->error));
      }
      if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
      const auto* msg = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      TcpSocket s;
      s.cookie = msg->id.idiag_cookie[0] | (uint64_t{msg->id.idiag_cookie[1]} << 32);
      s.local = Address(msg->idiag_family, msg->id.idiag_src);
      s.remote = Address(msg->idiag_family, msg->id.idiag_dst);
      int attr_len = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof(*msg)));
      for (auto* a = reinterpret_cast<rtattr*>(const_cast<inet_diag_msg*>(msg) + 1);
           RTA_OK(a, attr_len); a = RTA_NEXT(a, attr_len)) {
        if (a->rta_type != INET_DIAG_INFO) continue;
        tcp_info info{};
        std::memcpy(&info, RTA_DATA(a), std::min<size_t>(RTA_PAYLOAD(a), sizeof(info)));
        s.total_retrans = info.tcpi_total_retrans;
      }
      out.push_back(std::move(s));
    }
  }
}

}  // namespace

Result<std::vector<TcpSocket>> RealTcpSockets::List() {
  std::vector<TcpSocket> out;
  for (int family : {AF_INET, AF_INET6}) {
    if (auto s = Dump(family, out); !s.ok()) return s;
  }
  return out;
}

Result<TcpActivity> ParseTcpActivity(const std::string& snmp) {
  std::istringstream lines(snmp);
  std::string names, values;
  while (std::getline(lines, names) && std::getline(lines, values)) {
    if (!names.starts_with("Tcp:") || !values.starts_with("Tcp:")) continue;
    std::istringstream name(names), value(values);
    std::string n, v;
    TcpActivity out;
    int found = 0;
    while (name >> n && value >> v) {
      uint64_t* field = n == "RetransSegs"    ? &out.retrans_segs
                        : n == "PassiveOpens" ? &out.passive_opens
                                              : nullptr;
      if (field == nullptr) continue;
      char* end = nullptr;
      *field = std::strtoull(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0')
        return Internal("snmp: Tcp " + n + " is not a count: " + v);
      ++found;
    }
    if (found == 2) return out;
    break;
  }
  return Internal("snmp: no Tcp RetransSegs and PassiveOpens");
}

Result<TcpActivity> RealTcpSockets::Activity() {
  std::ifstream in("/proc/thread-self/net/snmp");
  if (!in) return Errno("/proc/thread-self/net/snmp");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseTcpActivity(text.str());
}

Result<std::vector<InterfaceAddress>> RealTcpSockets::Addresses() {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return Errno("getifaddrs");
  std::vector<InterfaceAddress> out;
  for (const ifaddrs* a = all; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_name == nullptr) continue;
    const int family = a->ifa_addr->sa_family;
    std::string text;
    if (family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
      text = Address(AF_INET, reinterpret_cast<const uint32_t*>(&in->sin_addr));
    } else if (family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr);
      text = Address(AF_INET6, reinterpret_cast<const uint32_t*>(&in6->sin6_addr));
    }
    if (!text.empty()) out.push_back({a->ifa_name, text});
  }
  freeifaddrs(all);
  return out;
}

}  // namespace fdrill
