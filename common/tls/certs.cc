#include "common/tls/certs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/tls/x509_text.h"

namespace fdrill {

namespace {

constexpr long kCaDays = 3650;
constexpr long kLeafDays = 365;

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using StorePtr = std::unique_ptr<X509_STORE, Deleter<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX_free>>;

// The newest OpenSSL error as text ("" when the queue is empty); clears it.
std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  std::string text;
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    text = buf;
  }
  ERR_clear_error();
  return text.empty() ? "unknown OpenSSL error" : text;
}

Status SslFailure(const std::string& what) { return Internal(what + ": " + OpenSslError()); }

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name == "ca" || name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

PkeyPtr NewP256Key() { return PkeyPtr(EVP_EC_gen("P-256")); }

// A leaf's key: Ed25519 for a node, P-256 for the rest (the header says why).
PkeyPtr NewLeafKey(CertRole role) {
  if (role == CertRole::kNode) return PkeyPtr(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  return NewP256Key();
}

// The digest X509_sign takes with `key`: none for EdDSA (it hashes inside
// the signature; OpenSSL refuses one), SHA-256 for the rest.
const EVP_MD* SigningDigest(EVP_PKEY* key) {
  bool eddsa = EVP_PKEY_is_a(key, "ED25519") || EVP_PKEY_is_a(key, "ED448");
  return eddsa ? nullptr : EVP_sha256();
}

X509Ptr CertFromPem(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return X509Ptr(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

PkeyPtr KeyFromPem(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return PkeyPtr(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

// A positive 127-bit serial from the CSPRNG (RFC 5280: at most 20 octets).
bool SetRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return false;
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;  // never zero, never a short encoding
  BnPtr bn(BN_bin2bn(bytes, sizeof(bytes), nullptr));
  return bn && BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) != nullptr;
}

bool AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// What a leaf in `role` may be used for (the header says why).
const char* ExtendedKeyUsage(CertRole role) {
  return role == CertRole::kNode ? "serverAuth" : "clientAuth";
}

// A certificate for `key` with CN=`cn`, valid `days` from now, signed by
// issuer_key (issuer nullptr: self-signed, the CA; `role` is then unused).
// Extensions as the header says.
Result<PemPair> MakeCert(const std::string& cn, long days, EVP_PKEY* key, X509* issuer,
                         EVP_PKEY* issuer_key, CertRole role) {
  X509Ptr cert(X509_new());
  if (!cert) return SslFailure("X509_new");
  bool is_ca = issuer == nullptr;
  X509_NAME* name = X509_get_subject_name(cert.get());
  // OU before CN, so the RFC 2253 subject (last entry first) reads
  // "CN=n1,OU=node".
  const std::string ou = CertRoleName(role);
  if (!is_ca && X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_UTF8,
                                           reinterpret_cast<const unsigned char*>(ou.c_str()), -1,
                                           -1, 0) != 1)
    return SslFailure("building the certificate for " + cn);
  bool ok = X509_set_version(cert.get(), 2) == 1 && SetRandomSerial(cert.get()) &&
            X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60) != nullptr &&
            X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * 24 * 3600) != nullptr &&
            X509_set_pubkey(cert.get(), key) == 1 &&
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                       reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                       0) == 1 &&
            X509_set_issuer_name(cert.get(), is_ca ? name : X509_get_subject_name(issuer)) == 1;
  if (!ok) return SslFailure("building the certificate for " + cn);
  X509* signer = is_ca ? cert.get() : issuer;
  if (is_ca) {
    ok = AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
         AddExtension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign") &&
         AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else {
    std::string san = "DNS:" + cn;
    ok = AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE") &&
         AddExtension(cert.get(), signer, NID_key_usage, "critical,digitalSignature") &&
         AddExtension(cert.get(), signer, NID_ext_key_usage, ExtendedKeyUsage(role)) &&
         AddExtension(cert.get(), signer, NID_subject_alt_name, san.c_str()) &&
         AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash") &&
         AddExtension(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
  }
  if (!ok) return SslFailure("certificate extensions for " + cn);
  EVP_PKEY* signing_key = is_ca ? key : issuer_key;
  if (X509_sign(cert.get(), signing_key, SigningDigest(signing_key)) <= 0)
    return SslFailure("signing " + cn);
  PemPair out{x509_text::CertPem(cert.get()), x509_text::KeyPem(key)};
  if (out.cert.empty() || out.key.empty()) return SslFailure("PEM encoding " + cn);
  return out;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Join(const std::string& dir, const std::string& file) {
  return (std::filesystem::path(dir) / file).string();
}

Status RefuseExisting(const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    if (access(p.c_str(), F_OK) == 0)
      return FailedPrecondition(p + " already exists; refusing to overwrite it");
  }
  return Status::Ok();
}

Status MakeDir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return Status::Ok();
  if (mkdir(dir.c_str(), 0700) == 0) return Status::Ok();
  if (errno == ENOENT) {
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
    if (!ec && mkdir(dir.c_str(), 0700) == 0) return Status::Ok();
  }
  return FailedPrecondition("cannot create " + dir + ": " + std::strerror(errno));
}

// Key first, so a cert never exists without its key; the pair is removed
// when the second write fails.
Status WritePair(const std::string& dir, const std::string& name, const PemPair& pair) {
  std::string key = Join(dir, name + ".key"), cert = Join(dir, name + ".pem");
  if (Status s = RefuseExisting({cert, key}); !s.ok()) return s;
  if (Status s = WriteNewFile(key, pair.key, 0600); !s.ok()) return s;
  if (Status s = WriteNewFile(cert, pair.cert, 0644); !s.ok()) {
    unlink(key.c_str());
    return s;
  }
  return Status::Ok();
}

}  // namespace

const char* CertRoleName(CertRole role) {
  switch (role) {
    case CertRole::kController:
      return "controller";
    case CertRole::kNode:
      return "node";
    case CertRole::kObserver:
      return "observer";
  }
  return "node";
}

Result<CertRole> ParseCertRole(const std::string& word) {
  for (CertRole r : {CertRole::kController, CertRole::kNode, CertRole::kObserver}) {
    if (word == CertRoleName(r)) return r;
  }
  return InvalidArgument("--role \"" + word +
                         "\": accepted: controller (drives drills: faults, leases, workloads), "
                         "node (an agent's server certificate), observer (read-only: hello and "
                         "inventory)");
}

Result<PemPair> MakeCa(const std::string& cn) {
  PkeyPtr key = NewP256Key();
  if (!key) return SslFailure("generating the CA key");
  return MakeCert(cn, kCaDays, key.get(), nullptr, nullptr, CertRole::kNode);
}

Result<PemPair> MakeLeaf(const PemPair& ca, const std::string& name, CertRole role) {
  if (!ValidName(name)) {
    return InvalidArgument("certificate name \"" + name +
                           "\": use 1-64 of A-Z a-z 0-9 . _ - (and not \"ca\")");
  }
  X509Ptr ca_cert = CertFromPem(ca.cert);
  if (!ca_cert) return SslFailure("the CA certificate");
  if (X509_check_ca(ca_cert.get()) <= 0)
    return InvalidArgument("the issuing certificate is not a CA");
  PkeyPtr ca_key = KeyFromPem(ca.key);
  if (!ca_key) return SslFailure("the CA key");
  if (X509_check_private_key(ca_cert.get(), ca_key.get()) != 1) {
    return InvalidArgument("the CA key does not belong to the CA certificate");
  }
  PkeyPtr key = NewLeafKey(role);
  if (!key) return SslFailure("generating the key for " + name);
  return MakeCert(name, kLeafDays, key.get(), ca_cert.get(), ca_key.get(), role);
}

Status WriteNewFile(const std::string& path, const std::string& text, unsigned mode) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST)
      return FailedPrecondition(path + " already exists; refusing to overwrite it");
    return FailedPrecondition("cannot create " + path + ": " + std::strerror(errno));
  }
  // open() applied the umask; a key must be 0600 whatever the umask.
  fchmod(fd, mode);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      close(fd);
      unlink(path.c_str());
      return FailedPrecondition("cannot write " + path + ": " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0)
    return FailedPrecondition("cannot write " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

Status InitCa(const std::string& dir) {
  if (Status s = RefuseExisting({Join(dir, "ca.pem"), Join(dir, "ca.key")}); !s.ok()) return s;
  if (Status s = MakeDir(dir); !s.ok()) return s;
  auto ca = MakeCa("fdrill CA");
  if (!ca.ok()) return ca.status();
  return WritePair(dir, "ca", *ca);
}

Status IssueCert(const std::string& ca_dir, const std::string& name, const std::string& out_dir,
                 CertRole role) {
  if (!ValidName(name)) return MakeLeaf(PemPair{}, name, role).status();
  std::string ca_pem = Join(ca_dir, "ca.pem"), ca_key = Join(ca_dir, "ca.key");
  auto cert = ReadFile(ca_pem);
  if (!cert.ok())
    return Status(cert.status().code(),
                  cert.status().message() + " (run `fdrill certs init` first)");
  auto key = ReadFile(ca_key);
  if (!key.ok()) return key.status();
  if (!CertFromPem(*cert))
    return InvalidArgument(ca_pem + ": not a PEM certificate: " + OpenSslError());
  if (!KeyFromPem(*key))
    return InvalidArgument(ca_key + ": not a PEM private key: " + OpenSslError());
  if (Status s = RefuseExisting({Join(out_dir, name + ".pem"), Join(out_dir, name + ".key")});
      !s.ok())
    return s;
  auto leaf = MakeLeaf(PemPair{*cert, *key}, name, role);
  if (!leaf.ok()) return leaf.status().Annotate(ca_pem);
  if (Status s = MakeDir(out_dir); !s.ok()) return s;
  return WritePair(out_dir, name, *leaf);
}

Status VerifyCert(const std::string& ca_pem, const std::string& cert_pem) {
  X509Ptr ca = CertFromPem(ca_pem), cert = CertFromPem(cert_pem);
  if (!ca) return InvalidArgument("not a PEM CA certificate: " + OpenSslError());
  if (!cert) return InvalidArgument("not a PEM certificate: " + OpenSslError());
  StorePtr store(X509_STORE_new());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca.get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1) {
    return SslFailure("setting up verification");
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    return FailedPrecondition(std::string("certificate does not verify: ") +
                              X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get())));
  }
  return Status::Ok();
}

Result<std::string> CertSubject(const std::string& cert_pem) {
  X509Ptr cert = CertFromPem(cert_pem);
  if (!cert) return InvalidArgument("not a PEM certificate: " + OpenSslError());
  std::string subject = x509_text::Subject(cert.get());
  if (subject.empty()) return SslFailure("printing the subject");
  return subject;
}

Result<std::string> CertSerial(const std::string& cert_pem) {
  X509Ptr cert = CertFromPem(cert_pem);
  if (!cert) return InvalidArgument("not a PEM certificate: " + OpenSslError());
  std::string serial = x509_text::Serial(cert.get());
  if (serial.empty()) return SslFailure("reading the serial");
  return serial;
}

Result<std::string> RevokeCert(const std::string& ca_dir, const std::string& cert_file) {
  auto ca = ReadFile(Join(ca_dir, "ca.pem"));
  if (!ca.ok())
    return Status(ca.status().code(), ca.status().message() + " (run `fdrill certs init` first)");
  auto cert = ReadFile(cert_file);
  if (!cert.ok()) return cert.status();
  if (Status s = VerifyCert(*ca, *cert); !s.ok())
    return s.Annotate(cert_file + " (not issued by " + Join(ca_dir, "ca.pem") + "?)");
  auto serial = CertSerial(*cert);
  if (!serial.ok()) return serial.status().Annotate(cert_file);
  auto subject = CertSubject(*cert);
  const std::string list = Join(ca_dir, kRevokedFile);
  std::ofstream out(list, std::ios::app);
  out << "# " << (subject.ok() ? *subject : std::string("?")) << " (" << cert_file << ")\n"
      << *serial << "\n";
  out.flush();
  if (!out) return FailedPrecondition("cannot append to " + list + ": " + std::strerror(errno));
  return serial;
}

}  // namespace fdrill
