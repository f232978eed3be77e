#include "common/host/rtnl_socket.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fdrill {

namespace {
constexpr size_t kReceiveBuffer = 64 * 1024;
constexpr int kDumpTries = 3;  // a dump the kernel marks interrupted is repeated

std::string Errno(int e) { return std::strerror(e); }
}  // namespace

NlMessage::NlMessage(uint16_t type, uint16_t flags) : bytes_(NLMSG_HDRLEN, 0) {
  header()->nlmsg_len = NLMSG_HDRLEN;
  header()->nlmsg_type = type;
  header()->nlmsg_flags = flags | NLM_F_REQUEST;
}

void NlMessage::Append(const void* data, size_t size) {
  const size_t at = bytes_.size();
  bytes_.resize(at + NLMSG_ALIGN(size), 0);
  std::memcpy(bytes_.data() + at, data, size);
  header()->nlmsg_len = static_cast<uint32_t>(bytes_.size());
}

void NlMessage::Put(uint16_t type, const void* data, size_t size) {
  const size_t at = bytes_.size();
  bytes_.resize(at + NLA_ALIGN(NLA_HDRLEN + size), 0);
  nlattr attr{static_cast<uint16_t>(NLA_HDRLEN + size), type};
  std::memcpy(bytes_.data() + at, &attr, sizeof(attr));
  if (size > 0) std::memcpy(bytes_.data() + at + NLA_HDRLEN, data, size);
  header()->nlmsg_len = static_cast<uint32_t>(bytes_.size());
}

void NlMessage::Raw(const void* data, size_t size) {
  const size_t at = bytes_.size();
  bytes_.resize(at + NLA_ALIGN(size), 0);
  std::memcpy(bytes_.data() + at, data, size);
  header()->nlmsg_len = static_cast<uint32_t>(bytes_.size());
}

void NlMessage::Begin(uint16_t type, bool nested_flag) {
  nests_.push_back(bytes_.size());
  Put(static_cast<uint16_t>(nested_flag ? type | NLA_F_NESTED : type), nullptr, 0);
}

void NlMessage::End() {
  const size_t at = nests_.back();
  nests_.pop_back();
  const auto len = static_cast<uint16_t>(bytes_.size() - at);
  std::memcpy(bytes_.data() + at, &len, sizeof(len));
}

uint32_t NlAttr::U32() const {
  uint32_t v = 0;
  std::memcpy(&v, data.data(), std::min(data.size(), sizeof(v)));
  return v;
}

uint64_t NlAttr::U64() const {
  uint64_t v = 0;
  std::memcpy(&v, data.data(), std::min(data.size(), sizeof(v)));
  return v;
}

std::string NlAttr::String() const {
  std::string s(data);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::vector<NlAttr> ParseAttrs(std::string_view data, uint16_t max_type) {
  std::vector<NlAttr> out(max_type + 1u);
  size_t at = 0;
  while (at + NLA_HDRLEN <= data.size()) {
    nlattr attr;
    std::memcpy(&attr, data.data() + at, sizeof(attr));
    if (attr.nla_len < NLA_HDRLEN || at + attr.nla_len > data.size()) break;
    const uint16_t type = attr.nla_type & NLA_TYPE_MASK;
    if (type <= max_type)
      out[type] = {type, data.substr(at + NLA_HDRLEN, attr.nla_len - NLA_HDRLEN)};
    at += NLA_ALIGN(attr.nla_len);
  }
  return out;
}

RtnlSocket::~RtnlSocket() {
  if (fd_ >= 0) close(fd_);
}

Status RtnlSocket::Open() {
  if (fd_ >= 0) return Status::Ok();
  fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd_ < 0) return Internal("netlink socket (NETLINK_ROUTE): " + Errno(errno));
  // The kernel answers route requests as it takes them; the timeout only
  // bounds a reply that never comes.
  timeval tv{5, 0};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  const int on = 1;
  setsockopt(fd_, SOL_NETLINK, NETLINK_EXT_ACK, &on, sizeof(on));
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
    const int e = errno;
    close(fd_);
    fd_ = -1;
    return Internal("netlink bind: " + Errno(e));
  }
  buf_.resize(kReceiveBuffer);
  return Status::Ok();
}

Status RtnlSocket::Send(NlMessage& msg) {
  if (auto s = Open(); !s.ok()) return s;
  msg.header()->nlmsg_seq = ++seq_;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  const ssize_t n = sendto(fd_, msg.bytes().data(), msg.bytes().size(), 0,
                           reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel));
  if (n != static_cast<ssize_t>(msg.bytes().size()))
    return Internal("netlink send: " + Errno(errno));
  return Status::Ok();
}

Status RtnlSocket::Request(NlMessage& msg) {
  msg.header()->nlmsg_flags |= NLM_F_ACK;
  if (auto s = Send(msg); !s.ok()) return s;
  return Receive(seq_, /*dump=*/false, 0, nullptr);
}

Result<std::vector<std::string>> RtnlSocket::Dump(NlMessage& msg, uint16_t type) {
  msg.header()->nlmsg_flags |= NLM_F_DUMP;
  for (int attempt = 1;; ++attempt) {
    if (auto s = Send(msg); !s.ok()) return s;
    std::vector<std::string> out;
    Status s = Receive(seq_, /*dump=*/true, type, &out);
    if (s.ok()) return out;
    if (s.code() != StatusCode::kUnavailable || attempt == kDumpTries) return s;
  }
}

Result<std::vector<std::string>> RtnlSocket::Get(NlMessage& msg, uint16_t type) {
  msg.header()->nlmsg_flags |= NLM_F_ACK;
  if (auto s = Send(msg); !s.ok()) return s;
  std::vector<std::string> out;
  if (auto s = Receive(seq_, /*dump=*/true, type, &out); !s.ok()) return s;
  return out;
}

Status RtnlSocket::Receive(uint32_t seq, bool dump, uint16_t type, std::vector<std::string>* out) {
  bool interrupted = false;
  for (;;) {
    const ssize_t n = recv(fd_, buf_.data(), buf_.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Internal("netlink receive: " + Errno(errno));
    }
    size_t left = static_cast<size_t>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf_.data()); NLMSG_OK(h, left);
         h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_seq != seq) continue;  // a late answer to an earlier request
      if (h->nlmsg_flags & NLM_F_DUMP_INTR) interrupted = true;
      if (h->nlmsg_type == NLMSG_DONE) {
        if (interrupted) return Unavailable("netlink dump interrupted by a change; repeat it");
        return Status::Ok();
      }
      if (h->nlmsg_type == NLMSG_ERROR) {
        const auto* err = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
        if (err->error == 0) return Status::Ok();
        const int e = -err->error;
        std::string text = Errno(e);
        // The extended ack's message, when the kernel gave one.
        if ((h->nlmsg_flags & NLM_F_ACK_TLVS) != 0) {
          const size_t fixed =
              NLMSG_HDRLEN + sizeof(nlmsgerr) +
              ((h->nlmsg_flags & NLM_F_CAPPED) ? 0 : err->msg.nlmsg_len - NLMSG_HDRLEN);
          if (fixed <= h->nlmsg_len) {
            auto tlvs = ParseAttrs(
                std::string_view(reinterpret_cast<char*>(h) + fixed, h->nlmsg_len - fixed),
                NLMSGERR_ATTR_MSG);
            if (!tlvs[NLMSGERR_ATTR_MSG].data.empty())
              text += " (" + tlvs[NLMSGERR_ATTR_MSG].String() + ")";
          }
        }
        if (e == ENODEV) return NotFound(text);
        if (e == EPERM) return PermissionDenied(text);
        return FailedPrecondition(text);
      }
      if (dump && h->nlmsg_type == type) {
        out->emplace_back(static_cast<const char*>(NLMSG_DATA(h)), h->nlmsg_len - NLMSG_HDRLEN);
      }
    }
  }
}

}  // namespace fdrill
