// The CA and certificates (common/tls/certs.h), the SSL contexts built from
// them (tls_context.h) and how `fdrill run` picks its TLS settings.
#include "common/tls/certs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "common/tls/tls_config.h"
#include "common/tls/tls_context.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/x509_build.h"

namespace fdrill {
namespace {

namespace fs = std::filesystem;
using x509_build::AddExt;
using x509_build::CertPem;
using x509_build::FillCert;
using x509_build::KeyPem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

unsigned Mode(const fs::path& p) {
  struct stat st {};
  stat(p.c_str(), &st);
  return st.st_mode & 0777;
}

// The type of the key in `pem` ("ED25519", "EC"), "" when it does not parse.
std::string KeyType(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  std::string type = key == nullptr ? "" : EVP_PKEY_get0_type_name(key);
  EVP_PKEY_free(key);
  return type;
}

// A CA made elsewhere with an Ed25519 key, as `openssl req -x509 -newkey
// ed25519` makes one: EdDSA signs without a separate digest.
PemPair Ed25519Ca() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  X509* cert = X509_new();
  bool ok = key != nullptr && FillCert(cert, key, "ed25519 CA", 7) &&
            X509_set_issuer_name(cert, X509_get_subject_name(cert)) == 1 &&
            AddExt(cert, cert, NID_basic_constraints, "critical,CA:TRUE") &&
            AddExt(cert, cert, NID_key_usage, "critical,keyCertSign") &&
            AddExt(cert, cert, NID_subject_key_identifier, "hash") &&
            X509_sign(cert, key, nullptr) > 0;
  PemPair ca;
  if (ok) ca = {CertPem(cert), KeyPem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return ca;
}

class CertsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = ScratchPath("fdrill-certs-test-"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(CertsMemory, LeafChainsToItsCaAndNotToAnother) {
  auto ca = MakeCa("test CA");
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  auto other = MakeCa("other CA");
  ASSERT_TRUE(other.ok());
  auto leaf = MakeLeaf(*ca, "n1", CertRole::kNode);
  ASSERT_TRUE(leaf.ok()) << leaf.status().ToString();

  EXPECT_TRUE(VerifyCert(ca->cert, leaf->cert).ok()) << VerifyCert(ca->cert, leaf->cert).ToString();
  EXPECT_TRUE(VerifyCert(ca->cert, ca->cert).ok());
  Status foreign = VerifyCert(other->cert, leaf->cert);
  EXPECT_FALSE(foreign.ok());
  EXPECT_NE(foreign.message().find("does not verify"), std::string::npos) << foreign.message();
  EXPECT_EQ(*CertSubject(leaf->cert), "CN=n1,OU=node");
  EXPECT_NE(leaf->key.find("BEGIN PRIVATE KEY"), std::string::npos);
}

// The controller keeps every agent's certificate while its link lasts; an
// Ed25519 key keeps it small (certs.h). The CA and the clients stay P-256.
TEST(CertsMemory, ANodesKeyIsEd25519AndTheOthersP256) {
  auto ca = MakeCa("test CA");
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  EXPECT_EQ(KeyType(ca->key), "EC");
  for (CertRole role : {CertRole::kNode, CertRole::kController, CertRole::kObserver}) {
    auto leaf = MakeLeaf(*ca, "n1", role);
    ASSERT_TRUE(leaf.ok()) << leaf.status().ToString();
    EXPECT_EQ(KeyType(leaf->key), role == CertRole::kNode ? "ED25519" : "EC") << CertRoleName(role);
    EXPECT_TRUE(VerifyCert(ca->cert, leaf->cert).ok()) << CertRoleName(role);
  }
}

TEST(CertsMemory, AnEd25519CaFromElsewhereIssues) {
  PemPair ca = Ed25519Ca();
  ASSERT_FALSE(ca.cert.empty());
  ASSERT_EQ(KeyType(ca.key), "ED25519");
  for (CertRole role : {CertRole::kNode, CertRole::kController}) {
    auto leaf = MakeLeaf(ca, "n1", role);
    ASSERT_TRUE(leaf.ok()) << leaf.status().ToString();
    Status verified = VerifyCert(ca.cert, leaf->cert);
    EXPECT_TRUE(verified.ok()) << verified.ToString();
  }
}

TEST(CertsMemory, OnlyACaIssues) {
  auto ca = MakeCa("test CA");
  auto leaf = MakeLeaf(*ca, "n1", CertRole::kNode);
  ASSERT_TRUE(leaf.ok());
  auto grandchild = MakeLeaf(*leaf, "n2", CertRole::kNode);
  ASSERT_FALSE(grandchild.ok());
  EXPECT_NE(grandchild.status().message().find("not a CA"), std::string::npos);
}

TEST(CertsMemory, BadNamesAreRefused) {
  auto ca = MakeCa("test CA");
  for (const std::string& bad :
       std::vector<std::string>{"", "ca", "..", "a/b", "x y", std::string(65, 'a')}) {
    auto leaf = MakeLeaf(*ca, bad, CertRole::kNode);
    EXPECT_FALSE(leaf.ok()) << bad;
  }
  EXPECT_TRUE(MakeLeaf(*ca, "node-7.rack_2", CertRole::kNode).ok());
}

TEST(CertsMemory, SerialsDiffer) {
  auto ca = MakeCa("test CA");
  auto a = MakeLeaf(*ca, "n1", CertRole::kNode);
  auto b = MakeLeaf(*ca, "n1", CertRole::kNode);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->cert, b->cert);
}

TEST_F(CertsTest, InitWritesCaWithPrivateKeyModeAndRefusesToOverwrite) {
  ASSERT_TRUE(InitCa(dir_.string()).ok());
  EXPECT_EQ(Mode(dir_), 0700u);
  EXPECT_EQ(Mode(dir_ / "ca.key"), 0600u);
  EXPECT_EQ(Mode(dir_ / "ca.pem"), 0644u);
  std::string before = Slurp(dir_ / "ca.pem");
  Status again = InitCa(dir_.string());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.message().find((dir_ / "ca.pem").string()), std::string::npos) << again.message();
  EXPECT_EQ(Slurp(dir_ / "ca.pem"), before);
}

TEST_F(CertsTest, IssueWritesAVerifiedPairAndRefusesToOverwrite) {
  ASSERT_TRUE(InitCa(dir_.string()).ok());
  fs::path out = dir_ / "issued";
  ASSERT_TRUE(IssueCert(dir_.string(), "controller", out.string(), CertRole::kController).ok());
  EXPECT_EQ(Mode(out / "controller.key"), 0600u);
  EXPECT_TRUE(VerifyCert(Slurp(dir_ / "ca.pem"), Slurp(out / "controller.pem")).ok());
  EXPECT_EQ(*CertSubject(Slurp(out / "controller.pem")), "CN=controller,OU=controller");
  Status again = IssueCert(dir_.string(), "controller", out.string(), CertRole::kController);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.message().find("controller.pem already exists"), std::string::npos)
      << again.message();
}

TEST_F(CertsTest, IssueWithoutACaNamesTheMissingFile) {
  Status s = IssueCert(dir_.string(), "n1", dir_.string(), CertRole::kNode);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find((dir_ / "ca.pem").string()), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("fdrill certs init"), std::string::npos) << s.message();
}

TEST_F(CertsTest, ContextsLoadIssuedFilesAndNameTheBadOne) {
  ASSERT_TRUE(InitCa(dir_.string()).ok());
  ASSERT_TRUE(IssueCert(dir_.string(), "n1", dir_.string(), CertRole::kNode).ok());
  ASSERT_TRUE(IssueCert(dir_.string(), "controller", dir_.string(), CertRole::kController).ok());
  TlsConfig agent = TlsConfig::InDir(dir_.string(), "n1");
  EXPECT_EQ(agent.cert_file, (dir_ / "n1.pem").string());
  EXPECT_TRUE(MakeServerContext(agent).ok()) << MakeServerContext(agent).status().ToString();
  EXPECT_TRUE(MakeClientContext(TlsConfig::InDir(dir_.string(), "controller")).ok());

  TlsConfig missing = TlsConfig::InDir(dir_.string(), "n9");
  auto m = MakeServerContext(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(missing.cert_file), std::string::npos)
      << m.status().message();

  TlsConfig mismatched = agent;
  mismatched.key_file = (dir_ / "controller.key").string();
  auto k = MakeServerContext(mismatched);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find(mismatched.key_file), std::string::npos)
      << k.status().message();
  EXPECT_NE(k.status().message().find("does not belong to the certificate " + agent.cert_file),
            std::string::npos)
      << k.status().message();
  // The same words for a key of the certificate's own type (both P-256).
  ASSERT_TRUE(IssueCert(dir_.string(), "ctl2", dir_.string(), CertRole::kController).ok());
  TlsConfig other_pair = TlsConfig::InDir(dir_.string(), "controller");
  other_pair.key_file = (dir_ / "ctl2.key").string();
  auto o = MakeClientContext(other_pair);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(
      o.status().message().find("TLS key " + other_pair.key_file +
                                " does not belong to the certificate " + other_pair.cert_file),
      std::string::npos)
      << o.status().message();

  std::ofstream(dir_ / "junk.pem") << "not a certificate\n";
  TlsConfig junk = agent;
  junk.ca_file = (dir_ / "junk.pem").string();
  auto j = MakeServerContext(junk);
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find(junk.ca_file), std::string::npos) << j.status().message();
}

TEST(ControllerTls, FlagsThenFabricPkiAndNeverSilentPlaintext) {
  auto insecure = ControllerTls("", true, "/run/fdrill/fabric/pki");
  ASSERT_TRUE(insecure.ok());
  EXPECT_FALSE(insecure->has_value());

  auto dir = ControllerTls("/etc/pki-x", false, "/run/fdrill/fabric/pki");
  ASSERT_TRUE(dir.ok() && dir->has_value());
  EXPECT_EQ((*dir)->cert_file, "/etc/pki-x/controller.pem");

  auto fabric = ControllerTls("", false, "/run/fdrill/fabric/pki");
  ASSERT_TRUE(fabric.ok() && fabric->has_value());
  EXPECT_EQ((*fabric)->ca_file, "/run/fdrill/fabric/pki/ca.pem");
  EXPECT_EQ((*fabric)->key_file, "/run/fdrill/fabric/pki/controller.key");

  EXPECT_FALSE(ControllerTls("/etc/pki-x", true, "").ok());
  auto none = ControllerTls("", false, "");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("--insecure"), std::string::npos);
}

}  // namespace
}  // namespace fdrill
