#include "common/tls/tls_context.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "common/tls/x509_text.h"

namespace fdrill {

namespace {

namespace ssl = boost::asio::ssl;

Result<std::string> ReadPem(const std::string& what, const std::string& path) {
  if (path.empty()) return InvalidArgument("no TLS " + what + " file given");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("TLS " + what + " " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Asio reports OpenSSL failures as an error_code; say which file it was.
Status Check(const boost::system::error_code& ec, const std::string& what,
             const std::string& path) {
  if (!ec) return Status::Ok();
  ERR_clear_error();
  return InvalidArgument("TLS " + what + " " + path + ": " + ec.message());
}

Result<std::unique_ptr<SslContext>> MakeContext(const TlsConfig& c, bool server) {
  auto ca = ReadPem("CA", c.ca_file);
  if (!ca.ok()) return ca.status();
  auto cert = ReadPem("certificate", c.cert_file);
  if (!cert.ok()) return cert.status();
  auto key = ReadPem("key", c.key_file);
  if (!key.ok()) return key.status();

  auto ctx = std::make_unique<SslContext>(server ? SslContext::tls_server : SslContext::tls_client);
  SSL_CTX* native = ctx->native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_3_VERSION) != 1) {
    return Internal("cannot require TLS 1.3 (OpenSSL too old?)");
  }
  boost::system::error_code ec;
  ctx->set_options(SslContext::default_workarounds | SslContext::no_compression, ec);
  ctx->add_certificate_authority(boost::asio::buffer(*ca), ec);
  if (Status s = Check(ec, "CA", c.ca_file); !s.ok()) return s;
  ctx->use_certificate_chain(boost::asio::buffer(*cert), ec);
  if (Status s = Check(ec, "certificate", c.cert_file); !s.ok()) return s;
  ctx->use_private_key(boost::asio::buffer(*key), SslContext::pem, ec);
  // A key of the certificate's type but another pair fails here (OpenSSL's
  // "key values mismatch"); a key of another type (EC against a node's
  // Ed25519) loads into its own slot and fails the check below. One message
  // for both.
  const bool other_pair =
      ec && ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH;
  if (!other_pair) {
    if (Status s = Check(ec, "key", c.key_file); !s.ok()) return s;
  }
  if (other_pair || SSL_CTX_check_private_key(native) != 1) {
    ERR_clear_error();
    return InvalidArgument("TLS key " + c.key_file + " does not belong to the certificate " +
                           c.cert_file);
  }
  // No TLS 1.3 session tickets: a controller dials each agent once per
  // drill and never resumes (a redial after an agent restart meets a new
  // process), so the two tickets OpenSSL sends by default are only work
  // for the agent and a session object per link for the controller.
  if (server) {
    SSL_CTX_set_num_tickets(native, 0);
  } else {
    SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
  }
  // Send the certificate file as it is, no chain built from the CA file.
  // OpenSSL's default, for a leaf given alone, verifies its own leaf against
  // the store at every handshake and sends the CA with it, which the peer
  // then parses too: an X509_verify_cert and a certificate parse per
  // handshake on each end, for nothing, since both ends hold the CA file
  // (docs/reference/protocol.md). A certificate file that carries intermediates
  // sends them, as before.
  SSL_CTX_set_mode(native, SSL_MODE_NO_AUTO_CHAIN);
  int mode = server ? (ssl::verify_peer | ssl::verify_fail_if_no_peer_cert) : ssl::verify_peer;
  ctx->set_verify_mode(mode, ec);
  if (ec) return Internal("set_verify_mode: " + ec.message());
  return ctx;
}

}  // namespace

Result<std::unique_ptr<SslContext>> MakeServerContext(const TlsConfig& config) {
  return MakeContext(config, true);
}

Result<std::unique_ptr<SslContext>> MakeClientContext(const TlsConfig& config) {
  return MakeContext(config, false);
}

PeerIdentity PeerIdentityOf(SSL* ssl) {
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr) return {};
  return {x509_text::Subject(cert), x509_text::Ou(cert), x509_text::Serial(cert)};
}

}  // namespace fdrill
