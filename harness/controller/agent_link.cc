#include "harness/controller/agent_link.h"

#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include "common/tls/socket_io.h"
#include "common/tls/tls_context.h"
#include "common/tls/tls_socket.h"
#include "common/wire/protocol.h"

namespace fdrill {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using asio::ip::tcp;

namespace {

// Where every link on a thread reads into: a link's bytes go into its frame
// decoder before the reader next suspends, so one buffer serves them all
// (a TLS record's most; 16 KiB per link was 160 MiB at 10,000 links).
constexpr size_t kReadChunk = 16384;
char* ReadBuffer() {
  thread_local char buf[kReadChunk];
  return buf;
}

}  // namespace

// A link's reader and writer are plain completion handlers, not
// coroutines: an idle link holds one pending wait for readability and
// nothing else (coroutine frames, their spawn state and a wake-up timer were
// ~2.5 KiB a link: 25 MiB at 10,000 agents, docs/concepts/scale.md).
struct AgentLink::Impl : std::enable_shared_from_this<AgentLink::Impl> {
  Impl(asio::io_context& io, std::shared_ptr<ssl::context> ctx)
      : io(io), ctx(std::move(ctx)), sock(io) {}

  // The TCP socket under the link, TLS or not.
  tcp::socket& socket() { return sock; }

  asio::io_context& io;
  // null: plaintext; else shared by every link with the same TlsConfig.
  std::shared_ptr<ssl::context> ctx;
  tcp::socket sock;
  std::unique_ptr<TlsSocket> tls;  // over sock once it is connected, when ctx is set
  std::string label;               // "agent n1 at 198.19.0.2:7100", for errors
  // io thread only: frames to send (from `queue_head` on), how much of the
  // first is out, and whether the reader and writer run / wait.
  std::vector<std::string> queue;
  size_t queue_head = 0, sent = 0;
  bool started = false, writing = false;
  FrameDecoder decoder;
  std::mutex mu;  // guards the fields below
  uint64_t next_id = 1;
  std::map<uint64_t, OnReply> pending;
  bool dropped = false;
  OnPush on_push;
  OnDrop on_drop;

  template <typename F>
  F Get(const F& f) {
    std::lock_guard<std::mutex> lock(mu);
    return f;
  }

  void Drop(const std::string& why) {
    std::map<uint64_t, OnReply> failed;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (dropped) return;
      dropped = true;
      failed.swap(pending);
    }
    for (auto& [id, reply] : failed) reply(Unavailable(label + ": connection lost: " + why));
    boost::system::error_code ec;
    socket().close(ec);
    queue.clear();
    queue_head = sent = 0;
    if (auto f = Get(on_drop)) f(why);
  }

  // Calls `then` once the socket can do what `o` wants (true), or drops the
  // link and returns false when `o` is the link's end. A wait that fails
  // (the socket closed under it: Drop, the dial's deadline) drops it too.
  template <typename Then>
  bool WaitFor(const TlsSocket::Outcome& o, Then then) {
    switch (o.state) {
      case TlsSocket::State::kWantRead:
      case TlsSocket::State::kWantWrite:
        sock.async_wait(o.state == TlsSocket::State::kWantRead ? tcp::socket::wait_read
                                                               : tcp::socket::wait_write,
                        [self = shared_from_this(), then](const boost::system::error_code& ec) {
                          if (ec) return self->Drop(ec.message());
                          then(*self);
                        });
        return true;
      case TlsSocket::State::kClosed:
        Drop("closed by the agent");
        return false;
      case TlsSocket::State::kFailed:
        Drop(o.error);
        return false;
      case TlsSocket::State::kDone:
        break;
    }
    return false;
  }

  // The TLS handshake to its end: "" or why it failed ("aborted" when the
  // socket was closed under it: the dial's deadline). The deadline can
  // close the socket after a wait completed and before this resumes: the
  // descriptor may be another link's by then (links dial side by side), so
  // TLS never touches it again once the socket is closed.
  asio::awaitable<std::string> Handshake() {
    try {
      for (;;) {
        if (!sock.is_open()) co_return std::string("aborted");
        auto o = tls->Handshake();
        if (o.state == TlsSocket::State::kDone) co_return std::string();
        if (o.state == TlsSocket::State::kClosed) co_return std::string("closed by the agent");
        if (o.state == TlsSocket::State::kFailed) co_return o.error;
        co_await sock.async_wait(o.state == TlsSocket::State::kWantRead ? tcp::socket::wait_read
                                                                        : tcp::socket::wait_write,
                                 asio::use_awaitable);
      }
    } catch (const boost::system::system_error& e) {
      co_return e.code() == asio::error::operation_aborted ? std::string("aborted")
                                                           : std::string(e.what());
    } catch (const std::exception& e) {
      co_return std::string(e.what());
    }
  }

  // Once connected: the reader runs from here on, and the writer sends
  // whatever was queued meanwhile.
  void Start() {
    started = true;
    Read();
    Flush();
  }

  // Reads and dispatches until the socket has nothing more, then waits.
  // Over TLS, once OpenSSL holds nothing unread, it waits for the socket
  // without the read that would only say "nothing more" (EAGAIN): Asio's
  // wait completes at once when the socket is readable already (it re-arms
  // the descriptor, which re-polls it). One read(2) less per message, of
  // the three a message cost (read, read, epoll_ctl): 10,000 agents send
  // 20,000 messages a second while idle (docs/performance.md, section 3).
  void Read() {
    for (;;) {
      if (dropped_io()) return;
      char* buf = ReadBuffer();
      auto got = ReadSome(tls.get(), sock, buf, kReadChunk);
      if (got.state != TlsSocket::State::kDone) {
        WaitFor(got, [](Impl& self) { self.Read(); });
        return;
      }
      // Out of the shared buffer before anything else reads into it.
      decoder.Feed(std::string_view(buf, got.bytes));
      for (;;) {
        auto msg = decoder.Next();
        if (!msg.ok()) return Drop(msg.status().message());
        if (!msg->has_value()) break;
        Json& m = **msg;
        uint64_t id = m.value("id", uint64_t{0});
        if (m.value("type", "") == "reply" && id != 0) {
          OnReply reply;
          {
            std::lock_guard<std::mutex> lock(mu);
            auto it = pending.find(id);
            if (it == pending.end()) continue;  // the caller gave up waiting
            reply = std::move(it->second);
            pending.erase(it);
          }
          reply(ReplyToResult(std::move(m)));
        } else if (auto f = Get(on_push)) {
          f(m);
        }
      }
      if (tls && !tls->Buffered()) {
        if (dropped_io()) return;
        WaitFor({TlsSocket::State::kWantRead, 0, {}}, [](Impl& self) { self.Read(); });
        return;
      }
    }
  }

  // Sends the queue; when the socket is full, waits and goes on from where
  // it stopped (a TLS write is retried with the same bytes). One writer at
  // a time: `writing` while a wait is pending.
  void Flush() {
    if (!started || writing) return;
    while (queue_head < queue.size()) {
      if (dropped_io()) return;
      const std::string& frame = queue[queue_head];
      auto put = WriteSome(tls.get(), sock, frame.data() + sent, frame.size() - sent);
      if (put.state != TlsSocket::State::kDone) {
        writing = WaitFor(put, [](Impl& self) {
          self.writing = false;
          self.Flush();
        });
        return;
      }
      sent += put.bytes;
      if (sent == frame.size()) {
        sent = 0;
        ++queue_head;
      }
    }
    queue.clear();
    queue_head = 0;
  }

  bool dropped_io() {
    std::lock_guard<std::mutex> lock(mu);
    return dropped;
  }
};

namespace {

// One client context per TlsConfig for the whole process, shared by every
// link that dials with it: a context holds the parsed CA, certificate and key,
// and building one per link cost a read and parse of three PEM files per agent
// and ~40 KiB each (10,000 agents: docs/performance.md). Kept while a link
// uses it; the files are read again once every link with it is gone.
std::shared_ptr<ssl::context> ClientContext(const TlsConfig* tls, Status* status) {
  if (tls == nullptr) return nullptr;
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<ssl::context>> cache;
  std::string key = tls->ca_file + '\n' + tls->cert_file + '\n' + tls->key_file;
  std::lock_guard<std::mutex> lock(mu);
  if (auto ctx = cache[key].lock()) return ctx;
  auto made = MakeClientContext(*tls);
  if (!made.ok()) {
    *status = made.status();
    return nullptr;
  }
  std::shared_ptr<ssl::context> ctx = std::move(made).value();
  cache[key] = ctx;
  return ctx;
}

}  // namespace

AgentLink::AgentLink(asio::io_context& io, std::string node, std::string host, uint16_t port,
                     const TlsConfig* tls)
    : node_(std::move(node)), host_(std::move(host)), port_(port) {
  impl_ = std::make_shared<Impl>(io, ClientContext(tls, &tls_status_));
  impl_->label = "agent " + node_ + " at " + address();
}

AgentLink::~AgentLink() {
  auto impl = this->impl();
  {
    std::lock_guard<std::mutex> lock(impl->mu);
    impl->on_push = nullptr;
    impl->on_drop = nullptr;
  }
  Close();
}

std::shared_ptr<AgentLink::Impl> AgentLink::impl() const {
  std::lock_guard<std::mutex> lock(impl_mu_);
  return impl_;
}

void AgentLink::set_on_push(OnPush f) {
  auto impl = this->impl();
  std::lock_guard<std::mutex> lock(impl->mu);
  impl->on_push = std::move(f);
}

void AgentLink::set_on_drop(OnDrop f) {
  auto impl = this->impl();
  std::lock_guard<std::mutex> lock(impl->mu);
  impl->on_drop = std::move(f);
}

Status AgentLink::Connect(Duration timeout) {
  std::promise<Status> done;
  auto fut = done.get_future();
  DialAsync(impl(), timeout, [&done](Status s) { done.set_value(std::move(s)); });
  return fut.get();
}

void AgentLink::ConnectAsync(Duration timeout, std::function<void(Status)> on_done) {
  DialAsync(impl(), timeout, std::move(on_done));
}

Status AgentLink::Reconnect(Duration timeout) {
  auto old = impl();
  auto fresh = std::make_shared<Impl>(old->io, old->ctx);
  fresh->label = old->label;
  {
    std::lock_guard<std::mutex> lock(old->mu);
    if (!old->dropped) return FailedPrecondition(old->label + ": still connected");
    fresh->on_push = old->on_push;
    fresh->on_drop = old->on_drop;
  }
  std::promise<Status> done;
  auto fut = done.get_future();
  DialAsync(fresh, timeout, [&done](Status s) { done.set_value(std::move(s)); });
  if (Status s = fut.get(); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(impl_mu_);
  impl_ = std::move(fresh);
  return Status::Ok();
}

bool AgentLink::connected() const {
  auto impl = this->impl();
  std::lock_guard<std::mutex> lock(impl->mu);
  return !impl->dropped;
}

void AgentLink::DialAsync(const std::shared_ptr<Impl>& impl_to_dial, Duration timeout,
                          std::function<void(Status)> on_done) {
  if (!tls_status_.ok()) return on_done(tls_status_.Annotate("agent " + node_));
  // An address, or a name (a real cluster's nodes: DNS or /etc/hosts),
  // resolved here on the caller's thread; every address it has is tried in
  // turn within the one deadline below.
  boost::system::error_code ec;
  tcp::resolver::results_type endpoints;
  if (auto addr = asio::ip::make_address(host_, ec); !ec) {
    endpoints = tcp::resolver::results_type::create(tcp::endpoint(addr, port_), host_,
                                                    std::to_string(port_));
  } else {
    tcp::resolver resolver(impl_to_dial->io);
    endpoints = resolver.resolve(host_, std::to_string(port_), tcp::resolver::numeric_service, ec);
    if (ec || endpoints.empty()) {
      return on_done(
          Unavailable("agent " + node_ + ": cannot resolve " + host_ + ": " +
                      (ec ? ec.message() : std::string("no address")) +
                      " (a node's name must resolve on the controller's host: DNS or /etc/hosts)"));
    }
  }
  auto impl = impl_to_dial;
  const std::string node = node_, address = this->address();
  // The one answer: a failure (handshaking: the TCP connect succeeded and
  // TLS did not) or, once both succeeded, the reader and writer started.
  auto finish = [impl, node, address, timeout, on_done = std::move(on_done)](
                    const std::string& error, bool aborted, bool handshaking) {
    if (error.empty() && !aborted) {
      impl->Start();
      return on_done(Status::Ok());
    }
    if (handshaking) {
      std::string why = aborted ? "no TLS handshake within " + FormatDuration(timeout) : error;
      return on_done(
          Unavailable("agent " + node + " at " + address + ": TLS handshake failed: " + why +
                      " (is its cert signed by the controller's CA and issued for " + node + "?)"));
    }
    std::string why = aborted ? "no answer within " + FormatDuration(timeout) : error;
    on_done(Unavailable("agent " + node + " at " + address + " does not answer: " + why +
                        " (is the fabric up? `fdrill fabric status`)"));
  };
  // One deadline for connect and handshake: on expiry the socket is closed
  // and whichever operation is pending fails with operation_aborted.
  auto timer = std::make_shared<asio::steady_timer>(impl->io, timeout);
  asio::post(impl->io, [impl, timer, node, endpoints, finish = std::move(finish)]() mutable {
    timer->async_wait([impl](const boost::system::error_code& e) {
      if (!e) {
        boost::system::error_code ignored;
        impl->socket().close(ignored);
      }
    });
    asio::async_connect(impl->socket(), endpoints,
                        [impl, timer, node, finish = std::move(finish)](
                            const boost::system::error_code& e, const tcp::endpoint&) mutable {
                          // Closed by the deadline after the connect had
                          // completed: as late as a connect that had not.
                          if (e || !impl->socket().is_open()) {
                            timer->cancel();
                            return finish(e ? e.message() : std::string(),
                                          !e || e == asio::error::operation_aborted, false);
                          }
                          // Non-blocking for the reader and writer, TLS or plain.
                          boost::system::error_code opt;
                          impl->socket().set_option(tcp::no_delay(true), opt);
                          impl->socket().non_blocking(true, opt);
                          if (!impl->ctx) {
                            timer->cancel();
                            return finish(std::string(), false, false);
                          }
                          // The agent must prove it is `node`: chain to the CA and CN/DNS = node.
                          impl->tls = std::make_unique<TlsSocket>(impl->ctx->native_handle(), node,
                                                                  impl->socket().native_handle());
                          if (!impl->tls->status().ok()) {
                            timer->cancel();
                            return finish(impl->tls->status().message(), false, true);
                          }
                          asio::co_spawn(impl->io, impl->Handshake(),
                                         [impl, timer, finish = std::move(finish)](
                                             std::exception_ptr, std::string error) mutable {
                                           timer->cancel();
                                           // Done as the deadline closed the
                                           // socket: too late, as aborted.
                                           bool aborted =
                                               error == "aborted" || !impl->socket().is_open();
                                           finish(aborted ? std::string() : error, aborted, true);
                                         });
                        });
  });
}

Result<Json> AgentLink::Call(const std::string& type, Json body, Duration timeout) {
  auto done = std::make_shared<std::promise<Result<Json>>>();
  auto fut = done->get_future();
  uint64_t id =
      CallAsync(type, std::move(body), [done](Result<Json> r) { done->set_value(std::move(r)); });
  if (fut.wait_for(timeout) != std::future_status::ready) {
    Forget(id);
    // The reply may have landed between the wait and Forget.
    if (fut.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return fut.get();
    return DeadlineExceeded("agent " + node_ + ": no reply to " + type + " within " +
                            FormatDuration(timeout));
  }
  return fut.get();
}

uint64_t AgentLink::CallAsync(const std::string& type, Json body, OnReply on_reply) {
  auto impl = this->impl();
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(impl->mu);
    if (!impl->dropped) {
      id = impl->next_id++;
      impl->pending[id] = std::move(on_reply);
    }
  }
  if (id == 0) {
    on_reply(Unavailable("agent " + node_ + ": connection lost"));
    return 0;
  }
  if (!drill_.empty() && (body.is_object() || body.is_null()) && !body.contains(proto::key::kDrill))
    body[proto::key::kDrill] = drill_;
  std::string frame = EncodeFrame(MakeRequest(type, id, std::move(body)));
  asio::post(impl->io, [impl, frame = std::move(frame)]() mutable {
    if (impl->dropped_io()) return;
    impl->queue.push_back(std::move(frame));
    impl->Flush();
  });
  return id;
}

void AgentLink::Forget(uint64_t id) {
  auto impl = this->impl();
  std::lock_guard<std::mutex> lock(impl->mu);
  impl->pending.erase(id);
}

void AgentLink::Close() {
  auto impl = this->impl();
  {
    std::lock_guard<std::mutex> lock(impl->mu);
    if (impl->dropped) return;
  }
  asio::post(impl->io, [impl] { impl->Drop("closed by the controller"); });
}

}  // namespace fdrill
