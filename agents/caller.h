// Who sent a request to the agent, as its server knows it: the connection's
// address and, under mutual TLS, the verified certificate's subject, role
// (its OU: common/tls/certs.h) and serial. Without TLS (an agent started
// with --insecure) there is no identity: `tls` is false and the rest empty.
#pragma once

#include <string>

namespace fdrill {

struct Caller {
  std::string peer;     // "10.0.0.1:53122"
  std::string subject;  // "CN=controller,OU=controller"
  std::string role;     // "controller", "observer", "node"; "" for a pre-role cert
  std::string serial;   // hex
  bool tls = false;
};

}  // namespace fdrill
