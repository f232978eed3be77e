#include "agents/server.h"

#include <unistd.h>

#include <cerrno>
#include <deque>
#include <vector>

#include <spdlog/spdlog.h>

#include "agents/listen.h"
#include "agents/metrics_watch.h"
#include "common/tls/socket_io.h"
#include "common/tls/tls_context.h"
#include "common/tls/tls_socket.h"

namespace fdrill {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using asio::ip::tcp;

namespace {

// Where every session on a thread reads into: a session's bytes go into its
// frame decoder before it next waits, so one buffer serves them all (the
// fake fleet runs thousands of agents on one thread).
constexpr size_t kReadChunk = 16384;
char* ReadBuffer() {
  thread_local char buf[kReadChunk];
  return buf;
}

}  // namespace

// One connection, TLS (TlsSocket: OpenSSL on the non-blocking socket) or
// plain TCP. Its handshake, reader and writer are plain completion handlers
// on the io thread, not coroutines over Asio's ssl::stream: an idle session
// holds one pending wait for readability, no stream buffers or BIO pair
// (~70 KiB a session: 700 MB for the fake fleet's 10,000 agents), and a
// message costs OpenSSL's own read or write on the socket, no copy through
// a BIO and no Asio operation per record (docs/performance.md, section 3).
class AgentSession : public std::enable_shared_from_this<AgentSession> {
 public:
  AgentSession(tcp::socket socket, AgentServer& server)
      : sock_(std::move(socket)), server_(server) {
    boost::system::error_code ec;
    auto ep = sock_.remote_endpoint(ec);
    peer_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
    caller_.peer = peer_;
  }

  // Plaintext: serves at once. TLS: the server side of the handshake first,
  // bounded by the server's handshake timeout so a client that connects and
  // stalls cannot hold a session open.
  void Start() {
    boost::system::error_code ec;
    sock_.non_blocking(true, ec);
    if (ec) {
      spdlog::warn("peer {}: {}; closing the connection", peer_, ec.message());
      return Finish();
    }
    if (server_.tls_ == nullptr) return Serve();
    tls_ = std::make_unique<TlsSocket>(server_.tls_->native_handle(), sock_.native_handle());
    if (!tls_->status().ok()) {
      spdlog::warn("peer {}: {}; closing the connection", peer_, tls_->status().message());
      return Finish();
    }
    handshake_timer_ = std::make_unique<asio::steady_timer>(sock_.get_executor());
    handshake_timer_->expires_after(server_.handshake_timeout_);
    handshake_timer_->async_wait([self = shared_from_this()](const boost::system::error_code& e) {
      if (e || self->ready_ || self->finished_) return;
      self->timed_out_ = true;
      boost::system::error_code ignored;
      self->sock_.close(ignored);  // the handshake's wait ends: Handshake logs it
    });
    Handshake();
  }

  // Past the handshake (always, for plaintext): may receive pushes.
  bool ready() const { return ready_; }

  void Send(const Json& msg) {
    if (finished_) return;
    queue_.push_back(EncodeFrame(msg));
    Flush();
  }

  void Close() {
    boost::system::error_code ec;
    sock_.shutdown(tcp::socket::shutdown_both, ec);
    sock_.close(ec);
    if (handshake_timer_) handshake_timer_->cancel();
  }

 private:
  // Goes on with the handshake until it is done (then serves), waits for
  // what it needs, or ends the session with one log line.
  void Handshake() {
    if (finished_) return;
    // Closed under a wait that had already completed (the handshake's
    // timeout, StopAccepting): its descriptor may be another file's now.
    if (!sock_.is_open()) return HandshakeFailed("aborted", false);
    TlsSocket::Outcome o = tls_->Handshake();
    if (o.state == TlsSocket::State::kWantRead || o.state == TlsSocket::State::kWantWrite) {
      return Wait(o.state, [](AgentSession& self, const boost::system::error_code& ec) {
        if (!ec) return self.Handshake();
        self.HandshakeFailed(ec == asio::error::operation_aborted ? "aborted" : ec.message(),
                             false);
      });
    }
    if (o.state == TlsSocket::State::kDone) {
      handshake_timer_->cancel();
      handshake_timer_.reset();
      const PeerIdentity id = PeerIdentityOf(tls_->native());
      caller_.subject = id.subject;
      caller_.role = id.role;
      caller_.serial = id.serial;
      caller_.tls = true;
      spdlog::debug("peer {}: TLS session as {} (serial {})", peer_, id.subject, id.serial);
      return Serve();
    }
    // A peer that connected and left without a handshake: a readiness probe.
    const bool quiet =
        o.state == TlsSocket::State::kClosed || o.sys_errno == ECONNRESET || o.sys_errno == EPIPE;
    HandshakeFailed(o.error, quiet);
  }

  void HandshakeFailed(const std::string& why, bool quiet) {
    if (timed_out_) {
      spdlog::warn("peer {}: no TLS handshake within {} ms; closing the connection", peer_,
                   server_.handshake_timeout_.count());
    } else if (why == "aborted") {
      spdlog::debug("peer {}: handshake cancelled (agent stopping)", peer_);
    } else if (quiet) {
      spdlog::debug("peer {}: closed before a TLS handshake (probe)", peer_);
    } else {
      spdlog::warn("peer {}: TLS handshake refused: {}; closing the connection", peer_, why);
    }
    Finish();
  }

  void Serve() {
    ready_ = true;
    server_.service_.ReceiverJoined();  // it holds no counters sample to apply a delta to
    Read();
    Flush();
  }

  // Calls then(*this, ec) once the socket can do what `want` says, or the
  // wait failed (the socket closed under it).
  template <typename Then>
  void Wait(TlsSocket::State want, Then then) {
    sock_.async_wait(
        want == TlsSocket::State::kWantRead ? tcp::socket::wait_read : tcp::socket::wait_write,
        [self = shared_from_this(), then](const boost::system::error_code& ec) {
          then(*self, ec);
        });
  }

  // Reads and handles requests until the socket has nothing more, then
  // waits. Over TLS, once OpenSSL holds nothing unread, it waits for the
  // socket without the read that would only say "nothing more" (EAGAIN).
  void Read() {
    for (;;) {
      if (finished_ || closing_) return;
      if (!sock_.is_open()) return Finish(/*drained=*/true);  // closed under a completed wait
      char* buf = ReadBuffer();
      TlsSocket::Outcome got = ReadSome(tls_.get(), sock_, buf, kReadChunk);
      if (got.state == TlsSocket::State::kWantRead || got.state == TlsSocket::State::kWantWrite) {
        return Wait(got.state, [](AgentSession& self, const boost::system::error_code& ec) {
          if (ec) return self.Finish();
          self.Read();
        });
      }
      if (got.state != TlsSocket::State::kDone) return Finish();  // peer closed or reset
      // Out of the shared buffer before anything else reads into it.
      decoder_.Feed(std::string_view(buf, got.bytes));
      for (;;) {
        auto msg = decoder_.Next();
        if (!msg.ok()) {
          spdlog::warn("peer {}: {}; closing the connection", peer_, msg.status().message());
          closing_ = true;
          Send(MakeErrorReply(0, msg.status()));
          if (queue_.empty()) Finish();  // sent already; else the writer finishes
          return;
        }
        if (!msg->has_value()) break;
        // Null: acknowledged in a push (a lease renewal), no reply.
        if (Json reply = server_.service_.Handle(**msg, caller_); !reply.is_null())
          Send(std::move(reply));
        server_.TickSoon();
        if (finished_) return;
      }
      if (tls_ && !tls_->Buffered()) {
        return Wait(TlsSocket::State::kWantRead,
                    [](AgentSession& self, const boost::system::error_code& ec) {
                      if (ec) return self.Finish();
                      self.Read();
                    });
      }
    }
  }

  // Sends the queue; when the socket is full, waits and goes on from where
  // it stopped (a TLS write is retried with the same bytes). One writer at
  // a time: `writing_` while its wait is pending.
  void Flush() {
    if (!ready_ || writing_ || finished_) return;
    if (!sock_.is_open()) return Finish(/*drained=*/true);  // closed under a completed wait
    while (!queue_.empty()) {
      const std::string& frame = queue_.front();
      TlsSocket::Outcome put =
          WriteSome(tls_.get(), sock_, frame.data() + sent_, frame.size() - sent_);
      if (put.state == TlsSocket::State::kWantRead || put.state == TlsSocket::State::kWantWrite) {
        writing_ = true;
        return Wait(put.state, [](AgentSession& self, const boost::system::error_code& ec) {
          self.writing_ = false;
          if (ec) return self.Finish(/*drained=*/true);
          self.Flush();
        });
      }
      if (put.state != TlsSocket::State::kDone) return Finish(/*drained=*/true);
      sent_ += put.bytes;
      if (sent_ == frame.size()) {
        sent_ = 0;
        queue_.pop_front();
      }
    }
    if (closing_) Finish();  // the error reply is out
  }

  // Ends the session: closes the socket and leaves the server's set. A
  // session closing on a bad frame waits for its error reply to go out
  // first, unless the writer itself failed (`drained`: nothing more will).
  void Finish(bool drained = false) {
    if (finished_) return;
    if (closing_ && !drained && (writing_ || !queue_.empty())) return;
    finished_ = true;
    Close();
    queue_.clear();
    server_.sessions_.erase(shared_from_this());
  }

  tcp::socket sock_;
  std::unique_ptr<TlsSocket> tls_;                       // over sock_, with the server's context
  std::unique_ptr<asio::steady_timer> handshake_timer_;  // during the handshake only
  AgentServer& server_;
  std::deque<std::string> queue_;  // frames to send; sent_ bytes of the first are out
  size_t sent_ = 0;
  FrameDecoder decoder_;
  std::string peer_;
  Caller caller_;  // who: the peer, and under TLS its certificate's identity
  bool ready_ = false, writing_ = false, timed_out_ = false, closing_ = false, finished_ = false;
};

AgentServer::AgentServer(asio::io_context& io, AgentService& service, ssl::context* tls)
    : io_(io), service_(service), tls_(tls), acceptor_(io), tick_timer_(io), metrics_watch_(io) {
  service_.set_push([this](Json msg) { Broadcast(msg); });
}

Status AgentServer::Listen(const std::string& host, uint16_t port) {
  return ListenTcp(acceptor_, host, port, "--listen", "");
}

uint16_t AgentServer::port() const { return ListeningPort(acceptor_); }

void AgentServer::Start(bool own_ticker) {
  asio::co_spawn(io_, AcceptLoop(), asio::detached);
  if (own_ticker) asio::co_spawn(io_, TickLoop(), asio::detached);
}

void AgentServer::StopAccepting() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  for (auto& s : std::set<std::shared_ptr<AgentSession>>(sessions_)) s->Close();
}

asio::awaitable<void> AgentServer::AcceptLoop() {
  while (auto accepted = co_await AcceptNext(acceptor_)) {
    tcp::socket socket = std::move(*accepted);
    boost::system::error_code ec;
    socket.set_option(tcp::no_delay(true), ec);
    auto session = std::make_shared<AgentSession>(std::move(socket), *this);
    sessions_.insert(session);
    session->Start();
  }
}

void TickOrDie(AgentService& service) {
  try {
    service.Tick();
    return;
  } catch (const std::exception& e) {
    spdlog::critical(
        "the agent's timer failed: {}; reverting and exiting, so the supervisor "
        "starts the agent again and its journal sweep reverts what is left",
        e.what());
  } catch (...) {
    spdlog::critical("the agent's timer failed (not a std::exception); reverting and exiting");
  }
  try {
    service.RevertEverything("the agent's timer failed");
  } catch (...) {
    spdlog::critical("reverting after the timer's failure failed too; the journal sweep will");
  }
  spdlog::shutdown();  // flushes the log before the process ends
  _exit(kTimerFailedExit);
}

std::chrono::steady_clock::time_point NextTick(std::chrono::steady_clock::time_point scheduled,
                                               std::chrono::steady_clock::time_point now,
                                               Duration interval) {
  const auto step = std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval);
  if (scheduled > now) return std::min(scheduled, now + step);
  return interval < AgentService::kBusyTick ? now + step : scheduled + step;
}

asio::awaitable<void> AgentServer::TickLoop() {
  ticking_ = true;
  next_tick_ = std::chrono::steady_clock::now();
  while (acceptor_.is_open()) {
    next_tick_ = NextTick(next_tick_, std::chrono::steady_clock::now(), service_.TickInterval());
    tick_timer_.expires_at(next_tick_);
    for (;;) {
      boost::system::error_code ec;
      co_await tick_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      // Aborted: TickSoon moved the expiry earlier; wait for the new one.
      if (!ec || !acceptor_.is_open() || tick_timer_.expiry() <= std::chrono::steady_clock::now())
        break;
    }
    TickOrDie(service_);
    FollowMetrics();
  }
  ticking_ = false;
  boost::system::error_code ec;
  metrics_watch_.close(ec);
  service_.SetMetricsWatched(false);
}

void AgentServer::FollowMetrics() {
  const std::string& dir = service_.metrics_dir();
  if (dir == watched_dir_) return;
  watched_dir_ = dir;
  boost::system::error_code ec;
  metrics_watch_.close(ec);  // the loop on the old one ends (operation_aborted)
  service_.SetMetricsWatched(false);
  if (dir.empty()) return;
  Result<MetricsWatch> watch = MetricsWatch::Open(dir);
  if (!watch.ok()) {
    spdlog::warn("metrics records pushed on the tick, not as written: {}",
                 watch.status().message());
    return;
  }
  metrics_watch_.assign(watch->Release());
  service_.SetMetricsWatched(true);
  asio::co_spawn(io_, MetricsLoop(++metrics_generation_), asio::detached);
}

asio::awaitable<void> AgentServer::MetricsLoop(uint64_t generation) {
  for (;;) {
    boost::system::error_code ec;
    co_await metrics_watch_.async_wait(asio::posix::descriptor::wait_read,
                                       asio::redirect_error(asio::use_awaitable, ec));
    // A wait that completed just before the watch was replaced ends too.
    if (ec || generation != metrics_generation_ || !metrics_watch_.is_open()) co_return;
    if (MetricsWatch::Drain(metrics_watch_.native_handle())) service_.PushMetrics();
  }
}

void AgentServer::TickSoon() {
  if (after_request_) after_request_();
  if (!ticking_) return;
  auto soon = std::chrono::steady_clock::now() + service_.TickInterval();
  if (soon >= next_tick_) return;
  next_tick_ = soon;
  tick_timer_.expires_at(next_tick_);  // cancels the pending wait
}

void AgentServer::Broadcast(const Json& msg) {
  // Over a copy: a session whose write fails finishes at once and leaves
  // sessions_ (its last owner but this copy) while the loop is on it.
  const std::vector<std::shared_ptr<AgentSession>> sessions(sessions_.begin(), sessions_.end());
  for (const auto& s : sessions) {
    if (s->ready()) s->Send(msg);
  }
}

}  // namespace fdrill
