// The Boost.Asio SSL contexts both ends of the control plane build from a
// TlsConfig. Both verify each other (mutual TLS) against one CA:
//  - server (the agent): TLS 1.3 only, verify_peer | verify_fail_if_no_peer_cert,
//    so a client without a cert signed by the CA never gets past the handshake;
//  - client (the controller): TLS 1.3 only, verify_peer, presenting its own
//    cert; AgentLink also checks the agent's cert names the node it dialled.
// The files are read once, when the context is built; errors name the file.
#pragma once

#include <memory>
#include <string>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/ssl/context.hpp>

#include "common/core/result.h"
#include "common/tls/tls_config.h"

namespace fdrill {

using SslContext = boost::asio::ssl::context;

Result<std::unique_ptr<SslContext>> MakeServerContext(const TlsConfig& config);
Result<std::unique_ptr<SslContext>> MakeClientContext(const TlsConfig& config);

// Who the peer's verified certificate says it is: the subject in RFC 2253
// form ("CN=controller,OU=controller"), its role (the OU: certs.h; "" for a
// certificate made before roles) and its serial (hex). All "" when the peer
// presented none.
struct PeerIdentity {
  std::string subject;
  std::string role;
  std::string serial;
};
PeerIdentity PeerIdentityOf(SSL* ssl);

}  // namespace fdrill
