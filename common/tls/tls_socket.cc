#include "common/tls/tls_socket.h"

#include <cerrno>
#include <cstring>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace fdrill {

bool TlsSocket::Make(SSL_CTX* ctx, int fd) {
  ssl_ = SSL_new(ctx);
  if (ssl_ == nullptr) {
    status_ = Internal("SSL_new failed");
    return false;
  }
  // Record buffers only while a record is in flight; a peer closing without
  // close_notify reads as a close (the agent's end of a dropped link), not
  // as an error. Read ahead: a record (or several) in one read(2) instead of
  // a read for its 5-byte header and another for its body.
  SSL_set_mode(ssl_, SSL_MODE_RELEASE_BUFFERS);
  SSL_set_read_ahead(ssl_, 1);
  SSL_set_options(ssl_, SSL_OP_IGNORE_UNEXPECTED_EOF);
  if (SSL_set_fd(ssl_, fd) != 1) {
    ERR_clear_error();
    status_ = Internal("cannot set up TLS on the socket");
    return false;
  }
  return true;
}

TlsSocket::TlsSocket(SSL_CTX* ctx, const std::string& peer_name, int fd) {
  if (!Make(ctx, fd)) return;
  SSL_set_hostflags(ssl_, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (SSL_set1_host(ssl_, peer_name.c_str()) != 1) {
    ERR_clear_error();
    status_ = Internal("cannot set up TLS for " + peer_name);
    return;
  }
  SSL_set_verify(ssl_, SSL_VERIFY_PEER, nullptr);
  SSL_set_connect_state(ssl_);
}

TlsSocket::TlsSocket(SSL_CTX* ctx, int fd) {
  if (!Make(ctx, fd)) return;
  SSL_set_accept_state(ssl_);
}

TlsSocket::~TlsSocket() { SSL_free(ssl_); }

TlsSocket::Outcome TlsSocket::Fail(int ret, const char* what) {
  int err = SSL_get_error(ssl_, ret);
  Outcome out;
  switch (err) {
    case SSL_ERROR_WANT_READ:
      out.state = State::kWantRead;
      return out;
    case SSL_ERROR_WANT_WRITE:
      out.state = State::kWantWrite;
      return out;
    case SSL_ERROR_ZERO_RETURN:
      out.state = State::kClosed;
      return out;
    default:
      break;
  }
  out.state = State::kFailed;
  const int saved_errno = errno;
  if (unsigned long e = ERR_get_error(); e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out.error = std::string(what) + ": " + buf;
    if (long v = SSL_get_verify_result(ssl_); v != X509_V_OK)
      out.error += std::string(" (") + X509_verify_cert_error_string(v) + ")";
  } else if (err == SSL_ERROR_SYSCALL && saved_errno != 0) {
    out.error = std::string(what) + ": " + std::strerror(saved_errno);
    out.sys_errno = saved_errno;
  } else {
    out.error = std::string(what) + ": connection closed";
  }
  ERR_clear_error();
  return out;
}

TlsSocket::Outcome TlsSocket::Handshake() {
  ERR_clear_error();
  int r = SSL_do_handshake(ssl_);
  if (r == 1) return {};
  return Fail(r, "TLS handshake");
}

bool TlsSocket::Buffered() const { return SSL_has_pending(ssl_) == 1; }

TlsSocket::Outcome TlsSocket::Read(char* buf, size_t n) {
  ERR_clear_error();
  size_t got = 0;
  if (SSL_read_ex(ssl_, buf, n, &got) == 1) return {State::kDone, got, {}};
  return Fail(0, "TLS read");
}

TlsSocket::Outcome TlsSocket::Write(const char* buf, size_t n) {
  ERR_clear_error();
  size_t put = 0;
  if (SSL_write_ex(ssl_, buf, n, &put) == 1) return {State::kDone, put, {}};
  return Fail(0, "TLS write");
}

}  // namespace fdrill
