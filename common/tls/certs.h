// fdrill's certificate authority: the keys and certificates that let agents
// and the controller prove who they are to each other (mutual TLS).
//
// A node's key is Ed25519, the CA's and every other leaf's EC P-256. The
// controller holds each agent's certificate, public key parsed, for as long
// as its link lasts; OpenSSL keeps a P-256 key with its own copy of the
// curve's group, an Ed25519 key as 32 bytes. At 10,000 agents that is the
// controller's RSS 246-247 MiB against 263-264 (fanout_bench, the two run
// alternately; heaptrack: the P-256 key ~2.5 KiB a link). The price is CPU
// once per link: the agent signs its handshake in ~30 us instead of ~20, the
// controller verifies it in ~80 us instead of ~53 (`openssl speed` here).
// Certificates are X509 v3, signed with SHA-256 by a P-256 issuer; an
// Ed25519 issuer (a CA brought from elsewhere) signs without a digest, as
// EdDSA requires. The CA is
// valid 10 years (CA:TRUE, pathlen 0, keyCertSign); a leaf 1 year (CA:FALSE,
// digitalSignature, CN=NAME plus OU=ROLE and DNS:NAME), with a 128-bit
// random serial. A leaf carries one role, which decides how it may be used:
//  - node: an agent's; extendedKeyUsage serverAuth only, so OpenSSL refuses
//    it at the handshake when a client presents it (one compromised node
//    cannot drive faults on the others);
//  - controller: clientAuth only; agents take fault-changing requests from
//    it alone;
//  - observer: clientAuth only; agents answer its hello and inventory and
//    refuse the rest.
// The agent reads the role from OU (tls_context.h PeerIdentity). A
// certificate made before roles existed has no OU and both usages: agents
// refuse it everything but hello, naming the command that issues a new one.
//
// Revocation: <dir>/revoked.txt lists revoked serials (hex, one per line,
// '#' comments); `fdrill certs revoke` appends to it and agents read it
// (agents/request_gate.h).
//
// Files: <dir>/ca.pem, <dir>/ca.key; <dir>/NAME.pem, <dir>/NAME.key. Keys are
// created mode 0600, certificates 0644. Nothing is ever overwritten: an
// existing file is an error naming it. Errors name the file involved.
//
// OpenSSL is called here and in tls_context.cc only. Thread-compatible.
#pragma once

#include <string>

#include "common/core/result.h"

namespace fdrill {

inline constexpr char kDefaultPkiDir[] = "/etc/fdrill/pki";

enum class CertRole { kController, kNode, kObserver };

// "controller", "node", "observer" (the OU value and the --role word).
const char* CertRoleName(CertRole role);
// From the --role word; InvalidArgument listing the three otherwise.
Result<CertRole> ParseCertRole(const std::string& word);

struct PemPair {
  std::string cert;  // PEM "CERTIFICATE"
  std::string key;   // PEM "PRIVATE KEY" (PKCS#8, unencrypted)
};

// In memory (no files): a new self-signed CA with CN=`cn`, and a leaf for
// `name` in `role` signed by `ca`. `name` must be 1-64 of [A-Za-z0-9._-]
// and not "ca".
Result<PemPair> MakeCa(const std::string& cn);
Result<PemPair> MakeLeaf(const PemPair& ca, const std::string& name, CertRole role);

// `fdrill certs init`: creates dir (0700) when missing and writes ca.pem and
// ca.key there. FailedPrecondition when either already exists.
Status InitCa(const std::string& dir);
// `fdrill certs issue`: a leaf for `name` in `role` signed by
// <ca_dir>/ca.{pem,key}, written as <out_dir>/NAME.{pem,key}.
// FailedPrecondition when either exists.
Status IssueCert(const std::string& ca_dir, const std::string& name, const std::string& out_dir,
                 CertRole role);

// `fdrill certs revoke`: appends the serial of the certificate in
// `cert_file` to <ca_dir>/revoked.txt (with a comment naming its subject);
// the certificate must have been signed by <ca_dir>'s CA. Returns the serial.
inline constexpr char kRevokedFile[] = "revoked.txt";
Result<std::string> RevokeCert(const std::string& ca_dir, const std::string& cert_file);

// Writes `text` to a new file (O_EXCL) with `mode`; the error names `path`.
Status WriteNewFile(const std::string& path, const std::string& text, unsigned mode);

// Ok when `cert_pem` chains to `ca_pem` and is valid now; else the reason.
Status VerifyCert(const std::string& ca_pem, const std::string& cert_pem);
// The certificate's subject in RFC 2253 form ("CN=n1,OU=node").
Result<std::string> CertSubject(const std::string& cert_pem);
// Its serial as upper-case hex without leading zeros ("5A0F...").
Result<std::string> CertSerial(const std::string& cert_pem);

}  // namespace fdrill
