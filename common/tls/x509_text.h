// Text of OpenSSL objects, for certs.cc and tls_context.cc (the two files
// that call OpenSSL) and the tests that build certificates by hand
// (tests/support/x509_build.h): a certificate's subject in RFC 2253 form,
// its OU (an fdrill certificate's role, certs.h) and its serial in hex; a
// certificate's or a private key's PEM. Each returns "" when the object
// lacks the field or OpenSSL fails.
#pragma once

#include <string>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace fdrill::x509_text {

// What WRITE put into a memory BIO; "" when WRITE returns false.
template <typename Write>
std::string MemBioText(Write write) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return "";
  std::string out;
  if (write(bio)) {
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    out.assign(data, static_cast<size_t>(n));
  }
  BIO_free(bio);
  return out;
}

inline std::string Subject(X509* cert) {
  return MemBioText([&](BIO* b) {
    return X509_NAME_print_ex(b, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0;
  });
}

inline std::string CertPem(X509* cert) {
  return MemBioText([&](BIO* b) { return PEM_write_bio_X509(b, cert) == 1; });
}

// Unencrypted.
inline std::string KeyPem(EVP_PKEY* key) {
  return MemBioText([&](BIO* b) {
    return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
}

// The first OU of the subject.
inline std::string Ou(X509* cert) {
  X509_NAME* name = X509_get_subject_name(cert);
  const int at = X509_NAME_get_index_by_NID(name, NID_organizationalUnitName, -1);
  if (at < 0) return "";
  ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, at));
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, value);
  if (n < 0) return "";
  std::string out(reinterpret_cast<char*>(utf8), static_cast<size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

// Upper-case hex, no leading zeros (as `openssl x509 -serial` prints it,
// less any leading zero).
inline std::string Serial(X509* cert) {
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get_serialNumber(cert), nullptr);
  if (bn == nullptr) return "";
  char* hex = BN_bn2hex(bn);
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(bn);
  return out;
}

}  // namespace fdrill::x509_text
