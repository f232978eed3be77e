// Building certificates by hand in tests, as `openssl req` / `openssl x509`
// would, for PKIs fdrill's own CA does not make (an Ed25519 CA, a root with
// an issuing CA under it):
//
// FillCert  version 3, SERIAL, valid from a minute ago for an hour, KEY's
//           public half, subject CN=CN; the issuer and extensions are the
//           caller's.
// AddExt    one extension in OpenSSL's config words ("critical,CA:TRUE"),
//           with ISSUER for the ones that name it (authorityKeyIdentifier).
// CertPem, KeyPem   PEM text ("" when it cannot be written): x509_text's.
#pragma once

#include <string>

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/tls/x509_text.h"

namespace fdrill::x509_build {

inline bool FillCert(X509* cert, EVP_PKEY* key, const char* cn, long serial) {
  X509_NAME* name = X509_get_subject_name(cert);
  return X509_set_version(cert, 2) == 1 &&
         ASN1_INTEGER_set(X509_get_serialNumber(cert), serial) == 1 &&
         X509_gmtime_adj(X509_getm_notBefore(cert), -60) != nullptr &&
         X509_gmtime_adj(X509_getm_notAfter(cert), 3600) != nullptr &&
         X509_set_pubkey(cert, key) == 1 &&
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                    reinterpret_cast<const unsigned char*>(cn), -1, -1, 0) == 1;
}

inline bool AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  bool ok = ext != nullptr && X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// The product's own (common/tls/x509_text.h).
using x509_text::CertPem;
using x509_text::KeyPem;

}  // namespace fdrill::x509_build
