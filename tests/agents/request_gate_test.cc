// Who may ask an agent what (agents/request_gate.h): by certificate role,
// and never with a revoked serial.
#include "agents/request_gate.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

Caller As(const std::string& role, const std::string& serial = "0A1B") {
  return Caller{.peer = "10.0.0.1:4000",
                .subject = "CN=x,OU=" + role,
                .role = role,
                .serial = serial,
                .tls = true};
}

TEST(RequestGate, ControllerMayAskAnythingObserverOnlyReads) {
  RequestGate gate;
  for (const char* type : {"hello", "check", "apply", "revert_all", "lease", "panic_clear"})
    EXPECT_TRUE(gate.Admit(As("controller"), type).ok()) << type;
  EXPECT_TRUE(gate.Admit(As("observer"), "hello").ok());
  EXPECT_TRUE(gate.Admit(As("observer"), "inventory").ok());
  for (const char* type : {"apply", "lease", "revert_all", "workload_start", "snapshot"}) {
    Status s = gate.Admit(As("observer"), type);
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << type;
    EXPECT_NE(s.message().find("observer certificate"), std::string::npos) << s.message();
  }
}

TEST(RequestGate, NodeAndRolelessCertificatesGetHelloOnly) {
  RequestGate gate;
  EXPECT_TRUE(gate.Admit(As("node"), "hello").ok());
  Status node = gate.Admit(As("node"), "apply");
  EXPECT_EQ(node.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(node.message().find("is a node certificate"), std::string::npos) << node.message();
  Caller old = As("");
  old.subject = "CN=controller";
  Status roleless = gate.Admit(old, "inventory");
  EXPECT_NE(roleless.message().find("carries no role"), std::string::npos) << roleless.message();
  EXPECT_NE(roleless.message().find("fdrill certs issue NAME --role controller"),
            std::string::npos);
}

TEST(RequestGate, WithoutTlsThereIsNoIdentityToCheck) {
  RequestGate gate;
  EXPECT_TRUE(gate.Admit(Caller{.peer = "test"}, "apply").ok());
}

TEST(RequestGate, RevokedSerialsAreRefusedFromTheNextRequestOn) {
  const auto dir = ScratchPath("fdrill-gate-test-");
  std::filesystem::create_directories(dir);
  const std::string list = (dir / "revoked.txt").string();
  RequestGate gate(list);
  EXPECT_TRUE(gate.Admit(As("controller", "0A1B"), "apply").ok());  // no list yet: none revoked
  std::ofstream(list) << "# CN=old (old.pem)\n0a1b\n";
  Status s = gate.Admit(As("controller", "0A1B"), "hello");
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("is revoked"), std::string::npos) << s.message();
  EXPECT_TRUE(gate.Admit(As("controller", "FF"), "apply").ok());
  // An unreadable list refuses everyone.
  std::filesystem::remove(list);
  std::filesystem::create_directories(list);  // a directory where the list should be
  EXPECT_FALSE(gate.Admit(As("controller", "FF"), "apply").ok());
  std::filesystem::remove_all(dir);
}

TEST(RequestGate, SerialsCompareWithoutCaseOrLeadingZeros) {
  EXPECT_EQ(NormalSerial("00:0a:1B"), "A1B");
  EXPECT_EQ(NormalSerial("0"), "0");
}

}  // namespace
}  // namespace fdrill
