// `fdrill fabric up --sshd` and `--slurm` over the recording fakes
// (FabricUpFixture): every node's sshd with the fabric's own keys and
// configs, an sshd that exits rolls everything back, sshd's package named
// when it is missing, and a slurmctld port already taken refused.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fabric/fabric_up.h"
#include "fabric/sshd.h"
#include "tests/fabric/fabric_up_fixture.h"

namespace fdrill {
namespace {

using Argv = std::vector<std::string>;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FabricUpSshdTest : public FabricUpFixture {
 protected:
  FabricUpSshdTest() : FabricUpFixture(2) {
    options_.sshd = true;
    options_.sshd_bin = "/usr/sbin/sshd";
    options_.keygen_bin = "/usr/bin/ssh-keygen";
    fs_.files["/etc/hosts"] = "127.0.0.1 localhost\n";
    // What ssh-keygen writes (the fake runner runs nothing): in place once
    // the first agent is spawned, which is before the keys are made.
    node_.on_spawn = [this](const SpawnSpec&) {
      fs_.files[kSsh + "/ssh_host_ed25519_key.pub"] =
          "ssh-ed25519 AAAAhost fdrill fabric host key\n";
      fs_.files[kSsh + "/id_ed25519.pub"] = "ssh-ed25519 AAAAclient fdrill fabric client key\n";
    };
  }
  std::vector<SpawnSpec> Sshds() const {
    std::vector<SpawnSpec> out;
    for (const auto& s : node_.spawned)
      if (s.argv.front() == "/usr/sbin/sshd") out.push_back(s);
    return out;
  }
  const std::string kSsh = "/run/fdrill/fabric/ssh";
};

TEST_F(FabricUpSshdTest, EveryNodeRunsAnSshdWithTheFabricsOwnKeysAndConfigs) {
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->ssh_dir, kSsh);
  EXPECT_THAT(runner_.CallsStartingWith({"/usr/bin/ssh-keygen"}),
              ElementsAre(Argv{"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                               "fdrill fabric host key", "-f", kSsh + "/ssh_host_ed25519_key"},
                          Argv{"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                               "fdrill fabric client key", "-f", kSsh + "/id_ed25519"}));
  const auto sshds = Sshds();
  ASSERT_EQ(sshds.size(), 2u);
  const std::string n1 = "/run/fdrill/fabric/n1";
  EXPECT_EQ(sshds[1].netns_path, "/run/netns/fdrill-n1");
  EXPECT_EQ(sshds[1].uts_path, n1 + "/uts");
  EXPECT_EQ(sshds[1].log_path, n1 + "/sshd.log");
  EXPECT_EQ(sshds[1].argv, (Argv{"/usr/sbin/sshd", "-D", "-e", "-f", kSsh + "/sshd_config", "-o",
                                 "ListenAddress=198.19.0.2:22", "-o", "PidFile=" + n1 + "/sshd.pid",
                                 "-o", "SetEnv=TMPDIR=" + n1 + "/tmp"}));
  EXPECT_GT(state->nodes[1].sshd_pid, 0);
  // Nothing of the machine's ssh: every file under the fabric's ssh dir.
  EXPECT_EQ(fs_.files[kSsh + "/authorized_keys"],
            "ssh-ed25519 AAAAclient fdrill fabric client key\n");
  EXPECT_EQ(fs_.files[kSsh + "/known_hosts"],
            "n0,198.19.0.1 ssh-ed25519 AAAAhost\nn1,198.19.0.2 ssh-ed25519 AAAAhost\n");
  EXPECT_THAT(fs_.files[kSsh + "/config"], HasSubstr("Host n1\n  HostName 198.19.0.2\n"));
  EXPECT_THAT(fs_.files[kSsh + "/config"],
              HasSubstr("UserKnownHostsFile " + kSsh + "/known_hosts\n"));
  EXPECT_THAT(fs_.files[kSsh + "/sshd_config"],
              HasSubstr("AuthorizedKeysFile " + kSsh + "/authorized_keys\n"));
  EXPECT_THAT(fs_.files[kSsh + "/sshd_config"], HasSubstr("PasswordAuthentication no\n"));
  EXPECT_EQ(fs_.files[kSsh + "/hosts"],
            "127.0.0.1 localhost\n# the emulated fabric's nodes (/run/fdrill/fabric), management "
            "addresses\n198.19.0.1 n0\n198.19.0.2 n1\n");
  auto saved = LoadFabricState(fs_, "/run/fdrill/fabric");
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(saved->ssh_dir, kSsh);
  EXPECT_EQ(saved->nodes[1].sshd_pid, state->nodes[1].sshd_pid);
}

TEST_F(FabricUpSshdTest, AnSshdThatExitsFailsUpWithItsLogAndLeavesNothing) {
  node_.connects_to = [](const std::string&, int port) { return port != kSshPort; };
  auto keys = node_.on_spawn;
  node_.on_spawn = [&](const SpawnSpec& spec) {
    keys(spec);
    if (spec.argv.front() == "/usr/sbin/sshd")
      fs_.files[spec.log_path] = "Missing privilege separation directory: /run/sshd\n";
  };
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(), HasSubstr("sshd on n0 (pid"));
  EXPECT_THAT(state.status().message(), HasSubstr("Missing privilege separation directory"));
  EXPECT_THAT(state.status().message(), HasSubstr("rolled back: nothing of the fabric is left"));
  // Every process up started (two agents, the switch's, two sshds) killed.
  EXPECT_EQ(runner_.CallsStartingWith({"kill", "-s", "KILL"}).size(), node_.spawned.size());
}

TEST(CheckSshdInstalled, NamesThePackageWhenSshdIsMissing) {
  const char* path = std::getenv("PATH");
  const std::string saved = path != nullptr ? path : "";
  setenv("PATH", "/nonexistent", 1);
  UpOptions options;
  Status s = CheckSshdInstalled(&options);
  setenv("PATH", saved.c_str(), 1);
  if (access("/usr/sbin/sshd", X_OK) == 0) {
    // /usr/sbin/sshd is tried even off PATH; ssh-keygen is then what is missing.
    EXPECT_EQ(s.code(), StatusCode::kNotInstalled);
    EXPECT_THAT(s.message(),
                HasSubstr("ssh-keygen is not installed (Debian package openssh-client)"));
  } else {
    EXPECT_EQ(s.code(), StatusCode::kNotInstalled);
    EXPECT_THAT(s.message(), HasSubstr("sshd is not installed (Debian package openssh-server)"));
  }
}

// A slurmctld left bound to the controller's address by an earlier fabric
// would take this fabric's registrations: up refuses before starting its
// own and rolls everything back.
TEST_F(FabricUpSshdTest, SlurmRefusesWhenTheSlurmctldPortIsAlreadyTaken) {
  options_.sshd = false;
  options_.slurm = true;
  options_.slurm_bin = {"/usr/sbin/munged", "/usr/sbin/mungekey", "/usr/sbin/slurmctld",
                        "/usr/sbin/slurmd", "/usr/bin/sinfo",     "/usr/bin/unshare",
                        "/bin/sh",          "/usr/bin/env"};
  node_.connects_to = [](const std::string&, int) { return true; };  // 6817 answers already
  node_.on_spawn = [this](const SpawnSpec& spec) {
    if (spec.argv.front() == "/usr/sbin/munged")
      fs_.files["/run/fdrill/fabric/slurm/munge.socket"] = "";
  };
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(),
              HasSubstr("--slurm: something already listens on 198.19.0.254:6817"));
  EXPECT_THAT(state.status().message(), HasSubstr("rolled back: nothing of the fabric is left"));
  for (const auto& spec : node_.spawned) EXPECT_NE(spec.argv.front(), "/usr/bin/unshare");
}

}  // namespace
}  // namespace fdrill
