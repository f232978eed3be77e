// How long a link flap lasts on the wire (issue 25: a 100 ms flap must last
// 100 +- 2 ms). A sender in the agent's namespace streams small UDP
// datagrams (one every `interval`) out of the flapped interface to a peer in
// a namespace of its own; the receiver takes each datagram's kernel receive
// time (SO_TIMESTAMPNS). A flap shows as a gap in those times: the last
// datagram before the link went down to the first after it came up, so a
// gap reads the outage plus at most one sending interval.
//
// The sender can itself be late: on a busy 2-core box a thread asleep for
// 200 us may wake milliseconds later, and a late send next to an edge
// lengthens the gap by as much, with the link's outage unchanged. So the
// sender runs at real-time priority where it may (SCHED_FIFO 1: it sleeps
// between sends), and records every send's time and whether the kernel took
// it (a send fails while the link is down: no route); Flaps() reads, for
// each flap, the sender's pause next to each edge beside the gap.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "common/core/units.h"

namespace fdrill::bench {

struct WireStream {
  std::string sender_ns, receiver_ns;  // /run/netns names
  std::string to;                      // the receiver's IPv4 address
  uint16_t port = 47999;
  Duration interval = std::chrono::microseconds(200);
};

// One flap as the probe saw it.
struct WireFlap {
  double gap_ms = 0;  // receiver: last datagram before the outage to the first after
  // Sender, next to each edge: from its last send the kernel took to the
  // next attempt (down), and from the attempt before its first send taken
  // again to that send (up). 0.2 ms each when the sender kept its pace; the
  // gap holds the outage plus at most their sum.
  double down_pause_ms = 0, up_pause_ms = 0;
  bool sender_seen = false;  // a run of failed sends matched the gap
};

// Streams until Stop(); the receive times (ns, as the kernel stamps them)
// and the sender's attempts are what Flaps() reads.
class WireProbe {
 public:
  explicit WireProbe(WireStream s) : s_(std::move(s)) {}
  ~WireProbe() { Stop(); }
  // Starts both threads; false (and a message on stderr) when a namespace or
  // a socket could not be had.
  bool Start();
  void Stop();
  // Gaps between consecutive datagrams longer than `at_least`, each with
  // the sender's pauses at its edges.
  std::vector<WireFlap> Flaps(Duration at_least) const;
  size_t received() const { return times_.size(); }
  // Whether the sender got real-time priority (root, or CAP_SYS_NICE).
  bool realtime() const { return realtime_; }

 private:
  void Receive(int fd);
  void Send(int fd);

  WireStream s_;
  std::atomic<bool> stop_{false};
  std::thread receiver_, sender_;
  std::vector<int64_t> times_;  // the receiver's; read after Stop
  struct Attempt {
    int64_t at;  // CLOCK_REALTIME ns just after the send returned, as times_
    bool taken;  // send() returned >= 0
  };
  std::vector<Attempt> sent_;  // the sender's; read after Stop
  std::atomic<bool> realtime_{false};
};

}  // namespace fdrill::bench
