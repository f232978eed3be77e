// How long a link flap lasts on the wire (issue 25: a 100 ms flap must last
// 100 +- 2 ms). A sender in the agent's namespace streams small UDP
// datagrams (one every `interval`) out of the flapped interface to a peer in
// a namespace of its own; the receiver takes each datagram's kernel receive
// time (SO_TIMESTAMPNS). A flap shows as a gap in those times: the last
// datagram before the link went down to the first after it came up, so a
// gap reads the outage plus at most one sending interval.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "harness/core/units.h"

namespace fdrill::bench {

struct WireStream {
  std::string sender_ns, receiver_ns;  // /run/netns names
  std::string to;                      // the receiver's IPv4 address
  uint16_t port = 47999;
  Duration interval = std::chrono::microseconds(200);
};

// Streams until Stop(); the receive times (ns, as the kernel stamps them)
// are what Gaps() reads.
class WireProbe {
 public:
  explicit WireProbe(WireStream s) : s_(std::move(s)) {}
  ~WireProbe() { Stop(); }
  // Starts both threads; false (and a message on stderr) when a namespace or
  // a socket could not be had.
  bool Start();
  void Stop();
  // Gaps between consecutive datagrams longer than `at_least`, in ms.
  std::vector<double> Gaps(Duration at_least) const;
  size_t received() const { return times_.size(); }

 private:
  void Receive(int fd);
  void Send(int fd);

  WireStream s_;
  std::atomic<bool> stop_{false};
  std::thread receiver_, sender_;
  std::vector<int64_t> times_;  // the receiver's; read after Stop
};

}  // namespace fdrill::bench
