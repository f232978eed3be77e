#include "harness/controller/agent_link.h"

#include <deque>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include "harness/tls/tls_context.h"
#include "harness/wire/protocol.h"

namespace fdrill {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using asio::ip::tcp;
using TlsStream = ssl::stream<tcp::socket>;

struct AgentLink::Impl : std::enable_shared_from_this<AgentLink::Impl> {
  Impl(asio::io_context& io, std::shared_ptr<ssl::context> ctx)
      : io(io), ctx(std::move(ctx)), plain(io), wake(io) {
    wake.expires_at(std::chrono::steady_clock::time_point::max());
    if (this->ctx) tls = std::make_unique<TlsStream>(io, *this->ctx);
  }

  // The TCP socket under the link, TLS or not.
  tcp::socket& socket() { return tls ? tls->next_layer() : plain; }

  asio::io_context& io;
  std::shared_ptr<ssl::context>
      ctx;                         // null: plaintext; shared by every link with the same TlsConfig
  std::unique_ptr<TlsStream> tls;  // over its own socket when ctx is set
  tcp::socket plain;               // used when ctx is null
  asio::steady_timer wake;
  std::string label;              // "agent n1 at 198.19.0.2:7100", for errors
  std::deque<std::string> queue;  // io thread only
  std::mutex mu;                  // guards the fields below
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
    wake.cancel();
    if (auto f = Get(on_drop)) f(why);
  }

  asio::awaitable<void> Reader() {
    if (tls) return ReaderOn(*tls);
    return ReaderOn(plain);
  }
  asio::awaitable<void> Writer() {
    if (tls) return WriterOn(*tls);
    return WriterOn(plain);
  }

  template <typename Stream>
  asio::awaitable<void> ReaderOn(Stream& stream) {
    auto self = shared_from_this();
    FrameDecoder decoder;
    char buf[16384];  // a TLS record's most; lives in each link's coroutine frame
    std::string why = "closed by the agent";
    try {
      for (;;) {
        size_t n = co_await stream.async_read_some(asio::buffer(buf), asio::use_awaitable);
        decoder.Feed(std::string_view(buf, n));
        for (;;) {
          auto msg = decoder.Next();
          if (!msg.ok()) throw std::runtime_error(msg.status().message());
          if (!msg->has_value()) break;
          const Json& m = **msg;
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
            reply(ReplyToResult(m));
          } else if (auto f = Get(on_push)) {
            f(m);
          }
        }
      }
    } catch (const std::exception& e) {
      why = e.what();
    }
    Drop(why);
  }

  template <typename Stream>
  asio::awaitable<void> WriterOn(Stream& stream) {
    auto self = shared_from_this();
    try {
      while (socket().is_open()) {
        if (queue.empty()) {
          boost::system::error_code ec;
          co_await wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
          continue;
        }
        std::string frame = std::move(queue.front());
        queue.pop_front();
        co_await asio::async_write(stream, asio::buffer(frame), asio::use_awaitable);
      }
    } catch (const std::exception& e) {
      Drop(e.what());
    }
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

Status AgentLink::Connect(Duration timeout) { return Dial(impl(), timeout); }

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
  if (Status s = Dial(fresh, timeout); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(impl_mu_);
  impl_ = std::move(fresh);
  return Status::Ok();
}

bool AgentLink::connected() const {
  auto impl = this->impl();
  std::lock_guard<std::mutex> lock(impl->mu);
  return !impl->dropped;
}

Status AgentLink::Dial(const std::shared_ptr<Impl>& impl_to_dial, Duration timeout) {
  if (!tls_status_.ok()) return tls_status_.Annotate("agent " + node_);
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
      return Unavailable(
          "agent " + node_ + ": cannot resolve " + host_ + ": " +
          (ec ? ec.message() : std::string("no address")) +
          " (a node's name must resolve on the controller's host: DNS or /etc/hosts)");
    }
  }
  struct Outcome {
    boost::system::error_code ec;
    bool handshaking = false;  // the TCP connect succeeded; the TLS handshake failed
  };
  auto done = std::make_shared<std::promise<Outcome>>();
  auto fut = done->get_future();
  auto impl = impl_to_dial;
  // One deadline for connect and handshake: on expiry the socket is closed
  // and whichever operation is pending fails with operation_aborted.
  auto timer = std::make_shared<asio::steady_timer>(impl->io, timeout);
  asio::post(impl->io, [impl, done, timer, node = node_, endpoints] {
    timer->async_wait([impl](const boost::system::error_code& e) {
      if (!e) {
        boost::system::error_code ignored;
        impl->socket().close(ignored);
      }
    });
    asio::async_connect(
        impl->socket(), endpoints,
        [impl, done, timer, node](const boost::system::error_code& e, const tcp::endpoint&) {
          if (e || !impl->tls) {
            timer->cancel();
            done->set_value(Outcome{e, false});
            return;
          }
          // The agent must prove it is `node`: chain to the CA and CN/DNS = node.
          impl->tls->set_verify_callback(ssl::host_name_verification(node));
          impl->tls->async_handshake(ssl::stream_base::client,
                                     [done, timer](const boost::system::error_code& h) {
                                       timer->cancel();
                                       done->set_value(Outcome{h, true});
                                     });
        });
  });
  Outcome outcome = fut.get();
  if (outcome.ec) {
    bool late = outcome.ec == asio::error::operation_aborted;
    if (outcome.handshaking) {
      std::string why =
          late ? "no TLS handshake within " + FormatDuration(timeout) : outcome.ec.message();
      return Unavailable("agent " + node_ + " at " + address() + ": TLS handshake failed: " + why +
                         " (is its cert signed by the controller's CA and issued for " + node_ +
                         "?)");
    }
    std::string why = late ? "no answer within " + FormatDuration(timeout) : outcome.ec.message();
    return Unavailable("agent " + node_ + " at " + address() + " does not answer: " + why +
                       " (is the fabric up? `fdrill fabric status`)");
  }
  asio::post(impl->io, [impl] {
    boost::system::error_code e;
    impl->socket().set_option(tcp::no_delay(true), e);
    asio::co_spawn(impl->io, impl->Reader(), asio::detached);
    asio::co_spawn(impl->io, impl->Writer(), asio::detached);
  });
  return Status::Ok();
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
    impl->queue.push_back(std::move(frame));
    impl->wake.cancel_one();
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
