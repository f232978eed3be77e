// AgentLink: the controller's connection to one agent. All links share one
// io_context that runs on a background thread; Connect and Call block the
// calling (controller) thread until the reply, the deadline, or the link
// drops. Pushes from the agent (proto::kPushTypes, common/wire/protocol.h) are
// handed to on_push on the io thread. Thread-safe.
//
// With a TlsConfig, Connect also runs a TLS 1.3 handshake presenting the
// controller's certificate and accepts only an agent whose certificate
// chains to the CA and names the node dialled (CN/DNS = node); without one
// (nullptr, `fdrill run --insecure`) the link is plain TCP. TLS is OpenSSL
// on the non-blocking socket (common/tls/tls_socket.h), not Asio's
// ssl::stream: ~70 KiB less per link. The io_context must run on one
// thread: a link's reader and writer share its OpenSSL connection.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/core/result.h"
#include "common/core/units.h"
#include "common/tls/tls_config.h"
#include "common/wire/wire.h"

namespace boost::asio {
class io_context;
}

namespace fdrill {

class AgentLink {
 public:
  using OnPush = std::function<void(const Json&)>;
  using OnDrop = std::function<void(const std::string& why)>;
  using OnReply = std::function<void(Result<Json>)>;

  // tls: nullptr for plaintext; read during construction only. A TLS config
  // whose files cannot be loaded makes Connect fail, naming the file.
  AgentLink(boost::asio::io_context& io, std::string node, std::string host, uint16_t port,
            const TlsConfig* tls);
  ~AgentLink();

  const std::string& node() const { return node_; }
  std::string address() const { return host_ + ":" + std::to_string(port_); }

  // Set before Connect; called on the io thread.
  // Every request from now on carries "drill": DRILL (unless its body names
  // one): the agent checks it against its lease's owner (agents/lease.h).
  // Set before the calls it applies to; not thread-safe against them.
  void set_drill(std::string drill) { drill_ = std::move(drill); }
  void set_on_push(OnPush f);
  void set_on_drop(OnDrop f);

  Status Connect(Duration timeout);
  // Connect without waiting: on_done runs once, on the io thread (or on
  // the caller's, for an error found before dialing: a name that does not
  // resolve, a TLS config that cannot be loaded). The name is resolved on
  // the caller's thread. ConnectAll (connect_all.h) dials many at once.
  void ConnectAsync(Duration timeout, std::function<void(Status)> on_done);
  // After the link dropped (the agent died and was started again): one
  // attempt to dial the same agent on a fresh connection, keeping on_push
  // and on_drop. Calls made before it succeeds fail as on the dropped link;
  // afterwards they go to the new connection. FailedPrecondition while the
  // link is still up; Connect's errors when nobody answers.
  Status Reconnect(Duration timeout);
  // False once the connection dropped (until a Reconnect succeeds).
  bool connected() const;
  // Sends {type, body} and waits for the reply; a reply with ok:false comes
  // back as its Status.
  Result<Json> Call(const std::string& type, Json body, Duration timeout);
  // Sends {type, body} and returns at once: on_reply runs once, on the io
  // thread, with the reply (as Call returns it) or the link's drop. No
  // deadline of its own: a caller that stops waiting calls Forget(id). The
  // fan-out primitive: one thread can have a request in flight to every agent.
  uint64_t CallAsync(const std::string& type, Json body, OnReply on_reply);
  void Forget(uint64_t id);
  void Close();

 private:
  struct Impl;
  // The connection now; Reconnect replaces it.
  std::shared_ptr<Impl> impl() const;
  void DialAsync(const std::shared_ptr<Impl>& impl, Duration timeout,
                 std::function<void(Status)> on_done);

  std::string node_, host_;
  uint16_t port_;
  mutable std::mutex impl_mu_;  // guards impl_ (the pointer, not what it points to)
  std::shared_ptr<Impl> impl_;
  Status tls_status_;  // the TLS context could not be built
  std::string drill_;  // stamped on every request when not empty
};

}  // namespace fdrill
