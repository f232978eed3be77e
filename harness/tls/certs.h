// fdrill's certificate authority: the keys and certificates that let agents
// and the controller prove who they are to each other (mutual TLS).
//
// Keys are EC P-256; certificates X509 v3 signed with SHA-256. The CA is
// valid 10 years (CA:TRUE, pathlen 0, keyCertSign); a leaf 1 year (CA:FALSE,
// digitalSignature, serverAuth + clientAuth, CN=NAME and DNS:NAME), with a
// 128-bit random serial. A leaf serves both ways: an agent presents its cert
// to the controller and the controller presents "controller" to agents.
//
// Files: <dir>/ca.pem, <dir>/ca.key; <dir>/NAME.pem, <dir>/NAME.key. Keys are
// created mode 0600, certificates 0644. Nothing is ever overwritten: an
// existing file is an error naming it. Errors name the file involved.
//
// OpenSSL is called here and in tls_context.cc only. Thread-compatible.
#pragma once

#include <string>

#include "harness/core/result.h"

namespace fdrill {

inline constexpr char kDefaultPkiDir[] = "/etc/fdrill/pki";

struct PemPair {
  std::string cert;  // PEM "CERTIFICATE"
  std::string key;   // PEM "PRIVATE KEY" (PKCS#8, unencrypted)
};

// In memory (no files): a new self-signed CA with CN=`cn`, and a leaf for
// `name` signed by `ca`. `name` must be 1-64 of [A-Za-z0-9._-] and not "ca".
Result<PemPair> MakeCa(const std::string& cn);
Result<PemPair> MakeLeaf(const PemPair& ca, const std::string& name);

// `fdrill certs init`: creates dir (0700) when missing and writes ca.pem and
// ca.key there. FailedPrecondition when either already exists.
Status InitCa(const std::string& dir);
// `fdrill certs issue`: a leaf for `name` signed by <ca_dir>/ca.{pem,key},
// written as <out_dir>/NAME.{pem,key}. FailedPrecondition when either exists.
Status IssueCert(const std::string& ca_dir, const std::string& name, const std::string& out_dir);

// Writes `text` to a new file (O_EXCL) with `mode`; the error names `path`.
Status WriteNewFile(const std::string& path, const std::string& text, unsigned mode);

// Ok when `cert_pem` chains to `ca_pem` and is valid now; else the reason.
Status VerifyCert(const std::string& ca_pem, const std::string& cert_pem);
// The certificate's subject in RFC 2253 form ("CN=n1").
Result<std::string> CertSubject(const std::string& cert_pem);

}  // namespace fdrill
