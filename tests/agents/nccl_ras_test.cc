// The NCCL RAS client against a fake endpoint that speaks the protocol as
// NCCL 2.28.9's source defines it (tests/fakes/fake_ras_server.h).
#include "common/host/nccl_ras.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_ras_server.h"

namespace fdrill {
namespace {

using testing::FakeRasJob;
using testing::FakeRasServer;

RasAddress At(const FakeRasServer& server) {
  return RasAddress{.host = "127.0.0.1", .port = server.port()};
}

TEST(NcclRas, AHealthyJobReportsNoMissingOrDeadProcess) {
  FakeRasServer server;
  auto text = QueryRasStatus(At(server), std::chrono::seconds(5));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(server.received(), (std::vector<std::string>{"CLIENT PROTOCOL 2", "STATUS"}));
  auto st = ParseRasStatus(*text);
  ASSERT_TRUE(st.ok()) << st.status().ToString() << "\n" << *text;
  EXPECT_TRUE(st->healthy());
  EXPECT_EQ(st->nccl_version, "2.28.9");
  EXPECT_EQ(st->missing, 0);
  EXPECT_EQ(st->dead, 0);
}

TEST(NcclRas, AStoppedProcessIsMissingThenDeadWithItsProcessLines) {
  FakeRasServer server;
  server.set_job(FakeRasJob{.missing = 1, .timeouts = 2});
  auto st = ParseRasStatus(*QueryRasStatus(At(server), std::chrono::seconds(5)));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_FALSE(st->healthy());
  EXPECT_EQ(st->missing, 1);
  EXPECT_EQ(st->dead, 0);
  EXPECT_EQ(st->missing_processes,
            (std::vector<std::string>{"Process 12345 on node 10.0.0.2 managing GPU 0"}));
  EXPECT_EQ(st->timeouts, 2);
  ASSERT_EQ(st->communicators.size(), 1u);
  EXPECT_EQ(st->communicators[0], "#0-0 (cf264af53edbe986) INCOMPLETE");

  server.set_job(FakeRasJob{.dead = 2});
  st = ParseRasStatus(*QueryRasStatus(At(server), std::chrono::seconds(5)));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->dead, 2);  // "2 job processes are considered dead"
  EXPECT_EQ(st->missing, 0);
  EXPECT_EQ(st->dead_processes.size(), 2u);
  EXPECT_EQ(RasStatusJson(*st)["dead"], 2);
}

TEST(NcclRas, NothingListeningIsUnavailableAndSaysWhy) {
  int port = 0;
  {
    FakeRasServer gone;
    port = gone.port();
  }
  auto text =
      QueryRasStatus(RasAddress{.host = "127.0.0.1", .port = port}, std::chrono::seconds(2));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(text.status().message().find("no NCCL job with RAS"), std::string::npos)
      << text.status().ToString();
}

TEST(NcclRas, AnotherServiceOrASilentOneIsRefusedInTime) {
  FakeRasServer other;
  other.set_greeting("SSH-2.0-OpenSSH_9.2");
  auto text = QueryRasStatus(At(other), std::chrono::seconds(2));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("not NCCL RAS"), std::string::npos)
      << text.status().ToString();

  FakeRasServer silent;
  silent.set_silent(true);
  text = QueryRasStatus(At(silent), std::chrono::milliseconds(100));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kDeadlineExceeded) << text.status().ToString();
}

TEST(NcclRas, OffIsSaidWithoutConnecting) {
  auto text = QueryRasStatus(RasAddress{.enabled = false}, std::chrono::seconds(1));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("NCCL_RAS_ENABLE=0"), std::string::npos);
}

TEST(NcclRas, ATruncatedReplyIsNotAStatus) {
  auto chunks = testing::RasStatusChunks(FakeRasJob{});
  auto st = ParseRasStatus(chunks[0] + chunks[1]);  // the server died before the tables
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("no \"Errors\" section"), std::string::npos);
}

TEST(NcclRas, TheAddressComesFromTheJobsEnvironment) {
  auto a = RasAddressFromEnv({});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "localhost");
  EXPECT_EQ(a->port, 28028);
  EXPECT_TRUE(a->enabled);
  a = RasAddressFromEnv({{"NCCL_RAS_ADDR", "10.1.2.3:29000"}, {"NCCL_RAS_ENABLE", "1"}});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "10.1.2.3");
  EXPECT_EQ(a->port, 29000);
  a = RasAddressFromEnv({{"NCCL_RAS_ADDR", "[::1]:28028"}});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::1");
  EXPECT_FALSE(RasAddressFromEnv({{"NCCL_RAS_ENABLE", "0"}})->enabled);
  for (const char* bad : {"localhost", "localhost:", ":28028", "h:0", "h:70000", "h:28x"}) {
    auto r = RasAddressFromEnv({{"NCCL_RAS_ADDR", bad}});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("NCCL_RAS_ADDR"), std::string::npos);
  }
  EXPECT_FALSE(RasAddressFromEnv({{"NCCL_RAS_ENABLE", "yes"}}).ok());
}

}  // namespace
}  // namespace fdrill
