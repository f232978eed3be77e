// AgentServer: the agent's network face. One io_context, one thread: an
// acceptor coroutine, per connection a session (a reader and a writer with
// one write queue, as plain completion handlers rather than coroutines: an
// idle session holds one pending wait and no stream buffers; server.cc),
// and a ticker coroutine that calls
// AgentService::Tick every TickInterval() — 20 ms while a workload runs,
// 100 ms otherwise, sooner when a fault's change or the lease's lapse is due;
// a request that makes the service busy brings the next
// tick forward (unless Start(false): then the owner ticks the service, as the
// fake fleet does for all its agents at once). With its own ticker it also
// watches the service's metrics directory (MetricsWatch) and has the service
// push the ranks' new records as soon as a file there changes.
//
// With an SSL context (the agent's --tls-*), every connection must complete
// a TLS 1.3 handshake presenting a client certificate the CA signed, within
// the handshake timeout, before a single byte of it reaches AgentService; the
// certificate's subject goes to Handle() for the audit log. Without one (the
// agent's explicit --insecure) connections are plain TCP.
//
// TLS is OpenSSL on the non-blocking socket (common/tls/tls_socket.h), as on
// the controller's end, not Asio's ssl::stream (its buffers and BIO pair
// were ~70 KiB a connection and a copy per record).
//
// A connection that fails the handshake, sends garbage or an oversize frame
// is closed (one log line) and the agent keeps serving the others. A bare
// TCP connect-and-close (readiness probes) is logged at debug level only.
// Pushes from the service go to every session past its handshake.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include "agents/agent_service.h"

namespace fdrill {

class AgentSession;

// When the tick loop wakes next, after a tick that ran at `now` with its
// wake-up set for `scheduled`, Tick wanting to run again in `interval`
// (AgentService::TickInterval). An interval under kBusyTick is the time
// left to a fault's edge: from now. The regular cadence keeps its grid:
// from `scheduled`. A tick that ran before `scheduled` ran early — its
// timer had fired and its completion was queued when a request's
// TickSoon moved the wake-up (the same epoll batch: the request read
// first) — so that wake-up still stands, or a sooner one: counted from
// the grid it would land one interval past a flap's edge (a 100 ms flap
// measured 197 ms on the wire in 1 of 20-30).
std::chrono::steady_clock::time_point NextTick(std::chrono::steady_clock::time_point scheduled,
                                               std::chrono::steady_clock::time_point now,
                                               Duration interval);

// service.Tick(), and if it throws — which nothing in it should (pushes
// never throw, JSON is written by DumpJson) — the agent must not go on with
// a dead timer (no lease lapse, no max duration, no pushes, while requests
// are still answered): logged, everything reverted as far as it goes, and
// the process ends with kTimerFailedExit, so the supervisor (systemd, the
// fabric's) starts it again and the journal sweep reverts what is left.
inline constexpr int kTimerFailedExit = 70;  // EX_SOFTWARE
void TickOrDie(AgentService& service);

class AgentServer {
 public:
  // tls: nullptr for plaintext; else borrowed, outlives the server.
  AgentServer(boost::asio::io_context& io, AgentService& service,
              boost::asio::ssl::context* tls = nullptr);
  // Binds host:port (port 0: any); fails with the address in the message.
  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const;
  void set_handshake_timeout(std::chrono::milliseconds t) { handshake_timeout_ = t; }
  void Start(bool own_ticker = true);
  void StopAccepting();
  // Without its own ticker: called after each request the service handled,
  // so the owner can bring that service's next tick forward (TickInterval()
  // may now be shorter: a fault with an edge due). On the io thread.
  void set_after_request(std::function<void()> f) { after_request_ = std::move(f); }

 private:
  friend class AgentSession;
  boost::asio::awaitable<void> AcceptLoop();
  boost::asio::awaitable<void> TickLoop();
  // Watches service_.metrics_dir() while it is set (after each tick): a new
  // directory replaces the watch, none closes it.
  void FollowMetrics();
  boost::asio::awaitable<void> MetricsLoop(uint64_t generation);
  // After a request: the next tick no later than TickInterval() from now.
  void TickSoon();
  void Broadcast(const Json& msg);

  boost::asio::io_context& io_;
  AgentService& service_;
  boost::asio::ssl::context* tls_;
  std::chrono::milliseconds handshake_timeout_{5000};
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer tick_timer_;
  std::chrono::steady_clock::time_point next_tick_{};
  bool ticking_ = false;
  boost::asio::posix::stream_descriptor metrics_watch_;
  std::string watched_dir_;
  uint64_t metrics_generation_ = 0;  // of the watch MetricsLoop waits on
  std::set<std::shared_ptr<AgentSession>> sessions_;
  std::function<void()> after_request_;
};

}  // namespace fdrill
