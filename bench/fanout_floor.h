// The plain-TCP floor fanout_bench prints its figures against: in the same
// run, on the same box, what the same fan-outs cost with no TLS, no JSON and
// no agent behind them — N loopback TCP connects (as many at once as
// ConnectAll dials) and a round of one small frame to each of N peers and
// back (one Asio thread each side, as the controller and a fleet process).
// Anything above it is fdrill's own work (TLS, JSON, the agent); a box under
// load raises both.
//
// The echo peer runs as a child process (`fanout_bench --echo-server PORT`):
// its N sockets count against its own descriptor limit, not the bench's.
#pragma once

#include <cstdint>
#include <string>

namespace fdrill::bench {

struct Floor {
  double connect_s = 0;                     // N TCP connects, 256 in flight
  double echo_p50_ms = 0, echo_p99_ms = 0;  // first frame sent → last echo back, over rounds
  bool ok = false;
  std::string error;
};

// `self`: this bench's own binary, run as the echo peer on 127.0.0.1:port.
Floor MeasureFloor(const std::string& self, uint16_t port, int n, int rounds);

// The echo peer: accepts on 127.0.0.1:port, prints "echo ready", writes back
// whatever each connection sends, until SIGTERM. Returns the exit code.
int RunEchoServer(uint16_t port);

}  // namespace fdrill::bench
