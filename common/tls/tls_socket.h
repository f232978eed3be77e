// TlsSocket: one end of a TLS connection with OpenSSL reading and writing a
// non-blocking socket itself (SSL_set_fd): the controller's (client) end of
// an AgentLink, the agent's (server) end of a session (agents/server.cc). Every call is
// synchronous and never blocks: it does what the socket allows now and says
// what it waits for (kWantRead / kWantWrite); the caller waits for that on
// its event loop (AgentLink: Asio's socket.async_wait) and calls again with
// the same arguments.
//
// Why not Asio's ssl::stream: it keeps two 17 KiB buffers of its own and a
// 2 × 17 KiB BIO pair per connection, all resident, ~70 KiB before
// OpenSSL's record buffers; a controller with 10,000 agent links held
// 1.3 GiB (docs/performance.md). Every byte also went through that BIO
// pair (a copy each way) and an Asio operation per read and write. Here a connection costs
// OpenSSL's SSL object; its record buffers are given back while the link is idle
// (SSL_MODE_RELEASE_BUFFERS), and the bytes read land in the caller's
// buffer, which one thread can share across every link.
//
// Contract: one thread uses a TlsSocket at a time. A read and a write may
// both be waiting (a reader and a writer on one io thread): OpenSSL
// allows that as long as the calls themselves do not overlap. The socket is
// the caller's: TlsSocket never closes it.
#pragma once

#include <cstddef>
#include <string>

#include "common/core/result.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace fdrill {

class TlsSocket {
 public:
  enum class State { kDone, kWantRead, kWantWrite, kClosed, kFailed };
  struct Outcome {
    State state = State::kDone;
    size_t bytes = 0;   // kDone: bytes read or written
    std::string error;  // kFailed: OpenSSL's reason
    int sys_errno = 0;  // kFailed by the socket itself (ECONNRESET): its errno
  };

  // Client: the peer must present a certificate that chains to ctx's CA
  // and names `peer_name` (DNS SAN, or CN when it has none: X509_check_host).
  TlsSocket(SSL_CTX* ctx, const std::string& peer_name, int fd);
  // Server: the peer is verified as ctx's verify mode says (the agent's:
  // a client certificate the CA signed, or the handshake fails).
  TlsSocket(SSL_CTX* ctx, int fd);
  ~TlsSocket();
  TlsSocket(const TlsSocket&) = delete;
  TlsSocket& operator=(const TlsSocket&) = delete;

  // Not ok when OpenSSL could not make the connection's state.
  const Status& status() const { return status_; }

  Outcome Handshake();
  // Up to n decrypted bytes; kClosed at the peer's close_notify or EOF.
  Outcome Read(char* buf, size_t n);
  // All n bytes, or a want: call again with the same buf and n.
  Outcome Write(const char* buf, size_t n);
  // True when OpenSSL holds bytes it read from the socket but Read has not
  // returned yet (read ahead: a whole or partial next record). False: the
  // next Read would read the socket itself, so a reader may wait for the
  // socket to be readable instead of calling Read to learn that it is not.
  bool Buffered() const;

  SSL* native() { return ssl_; }

 private:
  Outcome Fail(int ret, const char* what);
  // SSL_new with the modes both ends use, on fd; false (status_ set) when
  // OpenSSL could not.
  bool Make(SSL_CTX* ctx, int fd);

  SSL* ssl_ = nullptr;
  Status status_;
};

}  // namespace fdrill
