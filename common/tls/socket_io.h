// ReadSome / WriteSome: what a non-blocking TCP socket allows now, through
// its TlsSocket when it has one (tls != nullptr), else plain TCP, said the
// same way either way (TlsSocket::Outcome: done with the bytes, a want to
// wait for, the peer's close, or a failure). The two ends of the control
// plane share them: the controller's AgentLink and the agent's sessions
// (agents/server.cc).
#pragma once

#include <cstddef>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/ip/tcp.hpp>

#include "common/tls/tls_socket.h"

namespace fdrill {

namespace socket_io_detail {
inline TlsSocket::Outcome PlainOutcome(const boost::system::error_code& ec, size_t bytes,
                                       TlsSocket::State want) {
  namespace error = boost::asio::error;
  if (!ec) return {TlsSocket::State::kDone, bytes, {}};
  if (ec == error::would_block || ec == error::try_again) return {want, 0, {}};
  if (ec == error::eof) return {TlsSocket::State::kClosed, 0, {}};
  return {TlsSocket::State::kFailed, 0, ec.message()};
}
}  // namespace socket_io_detail

inline TlsSocket::Outcome ReadSome(TlsSocket* tls, boost::asio::ip::tcp::socket& sock, char* buf,
                                   size_t n) {
  if (tls != nullptr) return tls->Read(buf, n);
  boost::system::error_code ec;
  size_t got = sock.read_some(boost::asio::buffer(buf, n), ec);
  return socket_io_detail::PlainOutcome(ec, got, TlsSocket::State::kWantRead);
}

inline TlsSocket::Outcome WriteSome(TlsSocket* tls, boost::asio::ip::tcp::socket& sock,
                                    const char* buf, size_t n) {
  if (tls != nullptr) return tls->Write(buf, n);
  boost::system::error_code ec;
  size_t put = sock.write_some(boost::asio::buffer(buf, n), ec);
  return socket_io_detail::PlainOutcome(ec, put, TlsSocket::State::kWantWrite);
}

}  // namespace fdrill
