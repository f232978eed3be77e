// A NETLINK_ROUTE socket: one request at a time, answered by an ack or a
// dump. What NetlinkNetStack (netlink_net_stack.h) speaks to the kernel;
// rtnetlink(7) and netlink(7) describe the wire. A request carries
// NLM_F_REQUEST | NLM_F_ACK and a sequence number; the kernel answers with
// NLMSG_ERROR (error 0: done) or, for a dump, messages until NLMSG_DONE.
// Messages of an earlier sequence (a reply that came after a timeout) are
// skipped.
#pragma once

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

// A netlink message being built: header, a fixed struct, then attributes,
// nests included. Bytes are laid out as NLMSG_ALIGN / NLA_ALIGN require.
class NlMessage {
 public:
  NlMessage(uint16_t type, uint16_t flags);
  // The fixed part after the header (ifinfomsg, tcmsg).
  void Append(const void* data, size_t size);
  void Put(uint16_t type, const void* data, size_t size);
  void PutU32(uint16_t type, uint32_t v) { Put(type, &v, sizeof(v)); }
  void PutU64(uint16_t type, uint64_t v) { Put(type, &v, sizeof(v)); }
  void PutString(uint16_t type, const std::string& s) { Put(type, s.c_str(), s.size() + 1); }
  // Bytes inside the open attribute before its own attributes (netem's
  // options: a struct, then attributes).
  void Raw(const void* data, size_t size);
  // Begin a nested attribute; End closes the latest (nests may nest).
  void Begin(uint16_t type, bool nested_flag = true);
  void End();

  nlmsghdr* header() { return reinterpret_cast<nlmsghdr*>(bytes_.data()); }
  std::vector<char>& bytes() { return bytes_; }

 private:
  std::vector<char> bytes_;
  std::vector<size_t> nests_;
};

// One attribute of a received message; nested ones parse the same way.
struct NlAttr {
  uint16_t type = 0;
  std::string_view data;
  uint32_t U32() const;
  uint64_t U64() const;
  std::string String() const;  // without the trailing NUL
};
// The attributes in `data` (a message's tail after its fixed struct, or a
// nest's payload), by type; a later duplicate overwrites. Index = type, up
// to max_type; absent ones have empty data.
std::vector<NlAttr> ParseAttrs(std::string_view data, uint16_t max_type);

// A fixed struct (tcmsg, tc_tbf_qopt, ...) from the head of `data`; false
// when `data` is shorter.
template <typename T>
bool ReadStruct(std::string_view data, T* out) {
  if (data.size() < sizeof(T)) return false;
  std::memcpy(out, data.data(), sizeof(T));
  return true;
}

// A dumped message's fixed struct and the attributes after it.
template <typename T>
bool SplitMessage(const std::string& payload, T* head, std::string_view* attrs) {
  if (!ReadStruct(payload, head)) return false;
  *attrs = std::string_view(payload).substr(NLMSG_ALIGN(sizeof(T)));
  return true;
}

class RtnlSocket {
 public:
  RtnlSocket() = default;
  ~RtnlSocket();
  RtnlSocket(const RtnlSocket&) = delete;
  RtnlSocket& operator=(const RtnlSocket&) = delete;

  // Opens the socket (close-on-exec) in this thread's network namespace.
  Status Open();
  // Sends `msg` and waits for the kernel's ack; an error carries the
  // kernel's errno text ("No such device", "Operation not permitted").
  Status Request(NlMessage& msg);
  // Sends a dump request and returns every message's payload (header
  // stripped) of type `type` until NLMSG_DONE.
  Result<std::vector<std::string>> Dump(NlMessage& msg, uint16_t type);
  // Sends a request for one object (RTM_GETLINK by name) and returns the
  // payloads of type `type` that come before the kernel's ack.
  Result<std::vector<std::string>> Get(NlMessage& msg, uint16_t type);

 private:
  Status Send(NlMessage& msg);
  // Reads datagrams until the reply to `seq` is complete.
  Status Receive(uint32_t seq, bool dump, uint16_t type, std::vector<std::string>* out);

  int fd_ = -1;
  uint32_t seq_ = 0;
  std::vector<char> buf_;
};

}  // namespace fdrill
