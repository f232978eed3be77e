#include "common/tls/tls_config.h"

#include <filesystem>

namespace fdrill {

TlsConfig TlsConfig::InDir(const std::string& dir, const std::string& name) {
  auto in = [&](const std::string& f) { return (std::filesystem::path(dir) / f).string(); };
  return TlsConfig{in("ca.pem"), in(name + ".pem"), in(name + ".key")};
}

Result<std::optional<TlsConfig>> ControllerTls(const std::string& tls_dir, bool insecure,
                                               const std::string& fabric_pki_dir) {
  if (insecure && !tls_dir.empty())
    return InvalidArgument("--tls-dir and --insecure exclude each other");
  if (insecure) return std::optional<TlsConfig>();
  if (!tls_dir.empty()) return std::optional<TlsConfig>(TlsConfig::InDir(tls_dir, "controller"));
  if (!fabric_pki_dir.empty())
    return std::optional<TlsConfig>(TlsConfig::InDir(fabric_pki_dir, "controller"));
  return FailedPrecondition(
      "no TLS material for the agents: the fabric records no pki dir; pass --tls-dir DIR (ca.pem, "
      "controller.pem, controller.key) or, for agents started with --insecure, --insecure");
}

}  // namespace fdrill
