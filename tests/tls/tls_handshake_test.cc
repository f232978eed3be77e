// What the two contexts (common/tls/tls_context.h) put on the wire: a
// handshake between MakeServerContext and MakeClientContext over an
// in-memory BIO pair, no sockets, and the chain each end received.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "common/tls/certs.h"
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

using SslPtr = std::unique_ptr<SSL, decltype(&SSL_free)>;

// Both ends' SSL after a handshake driven to its end (or to a failure) over
// a BIO pair; ok says whether both finished.
struct Handshake {
  SslPtr client{nullptr, SSL_free};
  SslPtr server{nullptr, SSL_free};
  bool ok = false;
};

Handshake Shake(SslContext& server_ctx, SslContext& client_ctx) {
  Handshake h;
  h.client.reset(SSL_new(client_ctx.native_handle()));
  h.server.reset(SSL_new(server_ctx.native_handle()));
  BIO* client_bio = nullptr;
  BIO* server_bio = nullptr;
  if (!h.client || !h.server || BIO_new_bio_pair(&client_bio, 0, &server_bio, 0) != 1) return h;
  SSL_set_bio(h.client.get(), client_bio, client_bio);
  SSL_set_bio(h.server.get(), server_bio, server_bio);
  SSL_set_connect_state(h.client.get());
  SSL_set_accept_state(h.server.get());
  bool client_done = false, server_done = false;
  for (int turn = 0; turn < 20 && !(client_done && server_done); ++turn) {
    for (auto [ssl, done] :
         {std::pair{h.client.get(), &client_done}, std::pair{h.server.get(), &server_done}}) {
      if (*done) continue;
      int rc = SSL_do_handshake(ssl);
      if (rc == 1) {
        *done = true;
        continue;
      }
      int err = SSL_get_error(ssl, rc);
      if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) return h;
    }
  }
  // TLS 1.3: the server checks the client's certificate when it reads the
  // client's Finished, after the client is done; one more read gets there.
  unsigned char byte = 0;
  SSL_read(h.server.get(), &byte, 1);
  h.ok = client_done && server_done && SSL_get_verify_result(h.server.get()) == X509_V_OK &&
         SSL_get_verify_result(h.client.get()) == X509_V_OK &&
         SSL_get0_peer_certificate(h.server.get()) != nullptr;
  return h;
}

// The certificates the peer sent, leaf first (a client's view holds the
// server's leaf; a server's view leaves the client's leaf out).
int SentByServer(const Handshake& h) {
  return sk_X509_num(SSL_get_peer_cert_chain(h.client.get()));
}
int SentByClientBesidesItsLeaf(const Handshake& h) {
  return sk_X509_num(SSL_get_peer_cert_chain(h.server.get()));
}

// A site's PKI, as `openssl` makes one: a root that may sign one level of
// CA below it, and an intermediate CA it signed. Returns {root, intermediate}.
std::pair<PemPair, PemPair> RootAndIntermediate() {
  EVP_PKEY* root_key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  EVP_PKEY* mid_key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  X509* root = X509_new();
  X509* mid = X509_new();
  bool ok = root_key != nullptr && mid_key != nullptr && FillCert(root, root_key, "site root", 1) &&
            X509_set_issuer_name(root, X509_get_subject_name(root)) == 1 &&
            AddExt(root, root, NID_basic_constraints, "critical,CA:TRUE,pathlen:1") &&
            AddExt(root, root, NID_key_usage, "critical,keyCertSign") &&
            AddExt(root, root, NID_subject_key_identifier, "hash") &&
            X509_sign(root, root_key, EVP_sha256()) > 0 &&
            FillCert(mid, mid_key, "site issuing", 2) &&
            X509_set_issuer_name(mid, X509_get_subject_name(root)) == 1 &&
            AddExt(mid, root, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
            AddExt(mid, root, NID_key_usage, "critical,keyCertSign") &&
            AddExt(mid, root, NID_subject_key_identifier, "hash") &&
            AddExt(mid, root, NID_authority_key_identifier, "keyid:always") &&
            X509_sign(mid, root_key, EVP_sha256()) > 0;
  std::pair<PemPair, PemPair> out;
  if (ok) out = {{CertPem(root), KeyPem(root_key)}, {CertPem(mid), KeyPem(mid_key)}};
  X509_free(root);
  X509_free(mid);
  EVP_PKEY_free(root_key);
  EVP_PKEY_free(mid_key);
  return out;
}

class TlsHandshakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ScratchPath("fdrill-tls-handshake-test-");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  TlsConfig Config(const std::string& name) const {
    return {.ca_file = (dir_ / "ca.pem").string(),
            .cert_file = (dir_ / (name + ".pem")).string(),
            .key_file = (dir_ / (name + ".key")).string()};
  }
  fs::path dir_;
};

// Each end sends its leaf alone: both hold the CA file, so OpenSSL's default
// (build the chain from the CA file and send the CA too) cost each end a
// verification of its own certificate and the peer a parse of the CA at
// every handshake, and the controller a CA certificate kept per link.
TEST_F(TlsHandshakeTest, EachEndSendsItsLeafAlone) {
  ASSERT_TRUE(InitCa(dir_.string()).ok());
  ASSERT_TRUE(IssueCert(dir_.string(), "n1", dir_.string(), CertRole::kNode).ok());
  ASSERT_TRUE(IssueCert(dir_.string(), "controller", dir_.string(), CertRole::kController).ok());
  auto server = MakeServerContext(TlsConfig::InDir(dir_.string(), "n1"));
  auto client = MakeClientContext(TlsConfig::InDir(dir_.string(), "controller"));
  ASSERT_TRUE(server.ok() && client.ok());

  Handshake h = Shake(**server, **client);
  ASSERT_TRUE(h.ok);
  EXPECT_EQ(SentByServer(h), 1);
  EXPECT_EQ(SentByClientBesidesItsLeaf(h), 0);
  EXPECT_EQ(PeerIdentityOf(h.server.get()).subject, "CN=controller,OU=controller");
}

// A site's PKI with an issuing CA under its root: a certificate file that
// carries the intermediate after the leaf sends it, and the peer, holding
// only the root, verifies the chain.
TEST_F(TlsHandshakeTest, AnIntermediateInTheCertificateFileIsSentAndVerified) {
  auto [root, mid] = RootAndIntermediate();
  ASSERT_FALSE(root.cert.empty());
  auto node = MakeLeaf(mid, "n1", CertRole::kNode);
  auto controller = MakeLeaf(mid, "controller", CertRole::kController);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  ASSERT_TRUE(controller.ok()) << controller.status().ToString();
  Write("ca.pem", root.cert);
  Write("n1.pem", node->cert + mid.cert);
  Write("n1.key", node->key);
  Write("controller.pem", controller->cert + mid.cert);
  Write("controller.key", controller->key);
  auto server = MakeServerContext(Config("n1"));
  auto client = MakeClientContext(Config("controller"));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ASSERT_TRUE(client.ok()) << client.status().ToString();

  Handshake h = Shake(**server, **client);
  ASSERT_TRUE(h.ok);
  EXPECT_EQ(SentByServer(h), 2);
  EXPECT_EQ(SentByClientBesidesItsLeaf(h), 1);

  // Without the intermediate the root alone cannot vouch for the leaf.
  Write("n1.pem", node->cert);
  auto bare = MakeServerContext(Config("n1"));
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_FALSE(Shake(**bare, **client).ok);
}

}  // namespace
}  // namespace fdrill
