#include "agents/server.h"

#include <deque>
#include <type_traits>

#include <spdlog/spdlog.h>

#include "agents/listen.h"
#include "agents/metrics_watch.h"
#include "harness/tls/tls_context.h"

namespace fdrill {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using asio::ip::tcp;
using TlsStream = ssl::stream<tcp::socket>;

// What the server needs of a session, whatever its stream.
class AgentSession {
 public:
  virtual ~AgentSession() = default;
  virtual void Send(const Json& msg) = 0;
  virtual void Close() = 0;
  // Past the handshake (always, for plaintext): may receive pushes.
  bool ready() const { return ready_; }

 protected:
  bool ready_ = false;
};

namespace {

tcp::socket& Lowest(tcp::socket& s) { return s; }
tcp::socket& Lowest(TlsStream& s) { return s.next_layer(); }

// A peer that connected and left without a byte: a readiness probe.
bool QuietClose(const boost::system::error_code& ec) {
  return ec == asio::error::eof || ec == ssl::error::stream_truncated ||
         ec == asio::error::connection_reset;
}

}  // namespace

template <typename Stream>
class StreamSession final : public AgentSession,
                            public std::enable_shared_from_this<StreamSession<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  StreamSession(Stream stream, AgentServer& server)
      : stream_(std::move(stream)),
        timer_(stream_.get_executor()),
        handshake_timer_(stream_.get_executor()),
        server_(server) {
    timer_.expires_at(std::chrono::steady_clock::time_point::max());
    boost::system::error_code ec;
    auto ep = Lowest(stream_).remote_endpoint(ec);
    peer_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
    caller_.peer = peer_;
  }

  void Start() {
    auto self = this->shared_from_this();
    asio::co_spawn(
        stream_.get_executor(), [self] { return self->Run(); }, asio::detached);
  }

  void Send(const Json& msg) override {
    queue_.push_back(EncodeFrame(msg));
    timer_.cancel_one();
  }

  void Close() override {
    boost::system::error_code ec;
    Lowest(stream_).shutdown(tcp::socket::shutdown_both, ec);
    Lowest(stream_).close(ec);
    timer_.cancel();
    handshake_timer_.cancel();
  }

 private:
  asio::awaitable<void> Run() {
    if constexpr (kTls) {
      if (!co_await Handshake()) {
        Finish();
        co_return;
      }
    }
    ready_ = true;
    server_.service_.ReceiverJoined();  // it holds no counters sample to apply a delta to
    auto self = this->shared_from_this();
    asio::co_spawn(
        stream_.get_executor(), [self] { return self->Reader(); }, asio::detached);
    asio::co_spawn(
        stream_.get_executor(), [self] { return self->Writer(); }, asio::detached);
  }

  // The server side of the TLS handshake, bounded by the server's timeout so
  // a client that connects and stalls cannot hold a session open.
  asio::awaitable<bool> Handshake() {
    auto self = this->shared_from_this();
    handshake_timer_.expires_after(server_.handshake_timeout_);
    handshake_timer_.async_wait([self](const boost::system::error_code& ec) {
      if (ec) return;
      self->timed_out_ = true;
      boost::system::error_code ignored;
      Lowest(self->stream_).close(ignored);
    });
    boost::system::error_code ec;
    co_await stream_.async_handshake(ssl::stream_base::server,
                                     asio::redirect_error(asio::use_awaitable, ec));
    handshake_timer_.cancel();
    if (!ec) {
      const PeerIdentity id = PeerIdentityOf(stream_.native_handle());
      caller_.subject = id.subject;
      caller_.role = id.role;
      caller_.serial = id.serial;
      caller_.tls = true;
      spdlog::debug("peer {}: TLS session as {} (serial {})", peer_, id.subject, id.serial);
      co_return true;
    }
    if (timed_out_) {
      spdlog::warn("peer {}: no TLS handshake within {} ms; closing the connection", peer_,
                   server_.handshake_timeout_.count());
    } else if (ec == asio::error::operation_aborted) {
      spdlog::debug("peer {}: handshake cancelled (agent stopping)", peer_);
    } else if (QuietClose(ec)) {
      spdlog::debug("peer {}: closed before a TLS handshake (probe)", peer_);
    } else {
      spdlog::warn("peer {}: TLS handshake refused: {}; closing the connection", peer_,
                   ec.message());
    }
    co_return false;
  }

  asio::awaitable<void> Reader() {
    FrameDecoder decoder;
    char buf[16384];
    try {
      for (;;) {
        size_t n = co_await stream_.async_read_some(asio::buffer(buf), asio::use_awaitable);
        decoder.Feed(std::string_view(buf, n));
        for (;;) {
          auto msg = decoder.Next();
          if (!msg.ok()) {
            spdlog::warn("peer {}: {}; closing the connection", peer_, msg.status().message());
            Send(MakeErrorReply(0, msg.status()));
            closing_ = true;
            co_return;
          }
          if (!msg->has_value()) break;
          Send(server_.service_.Handle(**msg, caller_));
          server_.TickSoon();
        }
      }
    } catch (const std::exception&) {
      // peer closed or reset
    }
    Finish();
  }

  asio::awaitable<void> Writer() {
    try {
      while (Lowest(stream_).is_open()) {
        if (queue_.empty()) {
          if (closing_) break;
          boost::system::error_code ec;
          co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
          continue;
        }
        std::string frame = std::move(queue_.front());
        queue_.pop_front();
        co_await asio::async_write(stream_, asio::buffer(frame), asio::use_awaitable);
      }
    } catch (const std::exception&) {
    }
    Finish();
  }

  void Finish() {
    if (finished_) return;
    if (closing_ && !queue_.empty()) {
      timer_.cancel_one();
      return;  // the writer drains the error reply, then finishes
    }
    finished_ = true;
    Close();
    server_.sessions_.erase(this->shared_from_this());
  }

  Stream stream_;
  asio::steady_timer timer_;
  asio::steady_timer handshake_timer_;
  AgentServer& server_;
  std::deque<std::string> queue_;
  std::string peer_;
  Caller caller_;  // who: the peer, and under TLS its certificate's identity
  bool timed_out_ = false;
  bool closing_ = false;
  bool finished_ = false;
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
    if (tls_ != nullptr) {
      auto session =
          std::make_shared<StreamSession<TlsStream>>(TlsStream(std::move(socket), *tls_), *this);
      sessions_.insert(session);
      session->Start();
    } else {
      auto session = std::make_shared<StreamSession<tcp::socket>>(std::move(socket), *this);
      sessions_.insert(session);
      session->Start();
    }
  }
}

asio::awaitable<void> AgentServer::TickLoop() {
  ticking_ = true;
  next_tick_ = std::chrono::steady_clock::now();
  while (acceptor_.is_open()) {
    // The regular cadence keeps its grid; an interval shorter than the
    // cadence is the time left until a fault's edge, counted from now.
    const Duration interval = service_.TickInterval();
    const auto now = std::chrono::steady_clock::now();
    next_tick_ = interval < AgentService::kBusyTick ? now + interval : next_tick_ + interval;
    tick_timer_.expires_at(next_tick_);
    for (;;) {
      boost::system::error_code ec;
      co_await tick_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      // Aborted: TickSoon moved the expiry earlier; wait for the new one.
      if (!ec || !acceptor_.is_open() || tick_timer_.expiry() <= std::chrono::steady_clock::now())
        break;
    }
    service_.Tick();
    FollowMetrics();
  }
  ticking_ = false;
  boost::system::error_code ec;
  metrics_watch_.close(ec);
}

void AgentServer::FollowMetrics() {
  const std::string& dir = service_.metrics_dir();
  if (dir == watched_dir_) return;
  watched_dir_ = dir;
  boost::system::error_code ec;
  metrics_watch_.close(ec);  // the loop on the old one ends (operation_aborted)
  if (dir.empty()) return;
  Result<MetricsWatch> watch = MetricsWatch::Open(dir);
  if (!watch.ok()) {
    spdlog::warn("metrics records pushed on the tick, not as written: {}",
                 watch.status().message());
    return;
  }
  metrics_watch_.assign(watch->Release());
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
  for (auto& s : sessions_) {
    if (s->ready()) s->Send(msg);
  }
}

}  // namespace fdrill
