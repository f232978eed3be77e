// TLS settings for the control plane: which CA, certificate and key each
// end uses. Plain data (no OpenSSL, no Asio); tls_context.h builds the SSL
// contexts from it.
#pragma once

#include <optional>
#include <string>

#include "common/core/result.h"

namespace fdrill {

struct TlsConfig {
  std::string ca_file;    // PEM CA certificate both ends trust
  std::string cert_file;  // this end's PEM certificate
  std::string key_file;   // its PEM private key

  // <dir>/ca.pem, <dir>/NAME.pem, <dir>/NAME.key, as `fdrill certs` writes them.
  static TlsConfig InDir(const std::string& dir, const std::string& name);
};

// What `fdrill run` dials with: --insecure (nullopt: plaintext), else
// --tls-dir, else the emulated fabric's pki dir (fabric.json). Both flags, or
// neither with no pki dir, is an error: plaintext is never chosen silently.
Result<std::optional<TlsConfig>> ControllerTls(const std::string& tls_dir, bool insecure,
                                               const std::string& fabric_pki_dir);

}  // namespace fdrill
