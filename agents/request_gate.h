// RequestGate: whether a caller may make a request of this agent at all,
// before anything reads or touches the node — by the certificate's role and
// the revocation list. Leases, limits and the panic latch come after it
// (agents/lease.h, agents/panic_latch.h).
//
// Rules (the caller's certificate has already chained to the CA):
//  - no TLS (--insecure): everything; there is no identity to check;
//  - a revoked serial (the list file, re-read when it changes): nothing;
//    an unreadable list refuses everyone (fail closed);
//  - controller: everything;
//  - observer: hello and inventory;
//  - node, or a certificate made before roles (no OU): hello only, with the
//    command that issues the right certificate.
// Every refusal is PermissionDenied naming the subject and what would be
// right. Single-threaded (the agent's).
#pragma once

#include <ctime>
#include <set>
#include <string>
#include <string_view>

#include "agents/caller.h"
#include "common/core/status.h"

namespace fdrill {

class RequestGate {
 public:
  // `revoked_file`: revoked serials, one hex per line, '#' comments
  // (`fdrill certs revoke`); "" or a missing file: none revoked.
  explicit RequestGate(std::string revoked_file = "") : revoked_file_(std::move(revoked_file)) {}

  Status Admit(const Caller& caller, std::string_view type);

  const std::string& revoked_file() const { return revoked_file_; }

 private:
  // Re-reads the list when its mtime or size changed; an error when it
  // exists and cannot be read.
  Status Refresh();

  std::string revoked_file_;
  std::set<std::string> revoked_;
  struct timespec mtime_ {};
  long long size_ = -1;
};

// "5a0f" -> "5A0F", leading zeros dropped: the form serials are compared in.
std::string NormalSerial(std::string_view hex);

}  // namespace fdrill
