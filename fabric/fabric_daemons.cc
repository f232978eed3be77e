#include <algorithm>

#include "common/host/programs.h"
#include "fabric/inventory.h"
#include "fabric/node_enter.h"
#include "fabric/slurm.h"
#include "fabric/sshd.h"
#include "fabric/up_support.h"

namespace fdrill {

std::string LogTail(SysFs& fs, const std::string& path) {
  auto text = fs.Read(path);
  if (!text.ok() || text->empty()) return "(" + path + " is empty)";
  std::string t = *text;
  if (t.size() > 600) t = "..." + t.substr(t.size() - 600);
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return path + ":\n" + t;
}

Status StartSshds(FabricState& state, const UpOptions& options, const FabricHost& host,
                  Rollback& rollback) {
  const SshFiles files = SshFilesOf(state);
  // /run/sshd: sshd's privilege-separation directory, which it requires
  // (the package's service makes it; the fabric may be the first sshd).
  const std::vector<FabricStep> steps = {
      {{"install", "-d", "-m", "0700", files.dir}, {}},
      {{"install", "-d", "-m", "0755", "/run/sshd"}, {}},
      {{options.keygen_bin, "-q", "-t", "ed25519", "-N", "", "-C", "fdrill fabric host key", "-f",
        files.HostKey()},
       {}},
      {{options.keygen_bin, "-q", "-t", "ed25519", "-N", "", "-C", "fdrill fabric client key", "-f",
        files.ClientKey()},
       {}},
  };
  for (const auto& step : steps) {
    if (Status s = rollback.Run(step); !s.ok()) return s.Annotate("--sshd");
  }
  auto host_pub = host.fs->Read(files.HostKey() + ".pub");
  if (!host_pub.ok()) return host_pub.status().Annotate("--sshd: the host key");
  auto client_pub = host.fs->Read(files.ClientKey() + ".pub");
  if (!client_pub.ok()) return client_pub.status().Annotate("--sshd: the client key");
  auto etc_hosts = host.fs->Read("/etc/hosts");
  const std::pair<std::string, std::string> texts[] = {
      {files.AuthorizedKeys(), *client_pub},
      {files.KnownHosts(), KnownHostsText(state, *host_pub)},
      {files.SshdConfig(), SshdConfigText(files)},
      {files.ClientConfig(), SshClientConfigText(state, files)},
      {files.Hosts(), HostsText(state, etc_hosts.ok() ? *etc_hosts : "")},
  };
  for (const auto& [path, text] : texts) {
    if (Status s = host.fs->Write(path, text); !s.ok()) return s.Annotate("--sshd");
  }
  for (FabricNode& n : state.nodes) {
    auto pid = SpawnOrUndo(host, InNode(n, SshdArgv(options.sshd_bin, files, n), SshdLogPath(n)),
                           rollback, "starting sshd on " + n.name);
    if (!pid.ok()) return pid.status();
    n.sshd_pid = *pid;
  }
  if (Status s = SaveFabricState(*host.fs, state); !s.ok()) return s;
  if (!options.wait_ready) return Status::Ok();
  for (const FabricNode& n : state.nodes) {
    if (Status s = WaitFor(
            host, options.ready_timeout,
            [&] {
              return host.node->TcpConnects(n.MgmtIp(), kSshPort, std::chrono::milliseconds(200));
            },
            [&] { return ProcessGone(*host.fs, n.sshd_pid); },
            "sshd on " + n.name + " (pid " + std::to_string(n.sshd_pid) + ", " + n.MgmtIp() + ":" +
                std::to_string(kSshPort) + ")",
            SshdLogPath(n));
        !s.ok())
      return s;
  }
  return Status::Ok();
}

Status StartSlurm(FabricState& state, const UpOptions& options, const FabricHost& host,
                  Rollback& rollback) {
  const auto& bin = options.slurm_bin;
  const SlurmFiles files = SlurmFilesOf(state);
  std::vector<FabricStep> steps = {
      {{"install", "-d", "-m", "0755", files.dir}, {}},
      {{"install", "-d", "-m", "0700", files.CtldState()}, {}},
      {{bin.mungekey, "--create", "--keyfile", files.MungeKey()}, {}},
  };
  for (const auto& n : state.nodes) steps.push_back({{"mkdir", "-p", SlurmdSpool(n)}, {}});
  for (const auto& step : steps) {
    if (Status s = rollback.Run(step); !s.ok()) return s.Annotate("--slurm");
  }
  auto etc_hosts = host.fs->Read("/etc/hosts");
  if (Status s =
          host.fs->Write(files.Hosts(), SlurmHostsText(state, etc_hosts.ok() ? *etc_hosts : ""));
      !s.ok())
    return s.Annotate("--slurm");
  if (Status s = host.fs->Write(files.Conf(), SlurmConfText(state, files)); !s.ok())
    return s.Annotate("--slurm");
  // Slurm takes a few seconds to register a node; more than an agent.
  const Duration timeout = std::max<Duration>(options.ready_timeout, std::chrono::seconds(30));

  const std::string munged_log = files.dir + "/munged.out";
  auto munged = SpawnOrUndo(host, {MungedArgv(bin.munged, files), "", "", "", munged_log}, rollback,
                            "--slurm: starting munged");
  if (!munged.ok()) return munged.status();
  state.munged_pid = *munged;
  if (Status s = WaitFor(
          host, timeout, [&] { return host.fs->Exists(files.MungeSocket()); },
          [&] { return ProcessGone(*host.fs, state.munged_pid); },
          "munged (pid " + std::to_string(*munged) + ")", munged_log);
      !s.ok())
    return s.Annotate("--slurm");

  // Something already answering where our slurmctld will listen (a
  // slurmctld a crashed fabric left, still bound to the address) would take
  // our slurmds' registrations and fail them on its other munge key.
  const std::string ctl_ip = state.controller_addr.substr(0, state.controller_addr.find('/'));
  if (host.node->TcpConnects(ctl_ip, kSlurmctldPort, std::chrono::milliseconds(200))) {
    return FailedPrecondition(
        "--slurm: something already listens on " + ctl_ip + ":" + std::to_string(kSlurmctldPort) +
        " (a slurmctld left by an earlier fabric?); `ss -ltnp 'sport = :" +
        std::to_string(kSlurmctldPort) + "'` names it: end it, then bring the fabric up again");
  }
  const std::string ctld_log = files.dir + "/slurmctld.out";
  auto ctld = SpawnOrUndo(
      host, {SlurmctldArgv(bin.unshare, bin.sh, bin.slurmctld, files), "", "", "", ctld_log},
      rollback, "--slurm: starting slurmctld");
  if (!ctld.ok()) return ctld.status();
  state.slurmctld_pid = *ctld;
  if (Status s = WaitFor(
          host, timeout,
          [&] {
            return host.node->TcpConnects(ctl_ip, kSlurmctldPort, std::chrono::milliseconds(200));
          },
          [&] { return ProcessGone(*host.fs, state.slurmctld_pid); },
          "slurmctld (pid " + std::to_string(*ctld) + ")", ctld_log);
      !s.ok())
    return s.Annotate("--slurm");

  for (FabricNode& n : state.nodes) {
    auto pid =
        SpawnOrUndo(host, InNode(n, SlurmdArgv(bin.slurmd, files, n), n.Dir() + "/slurmd.out"),
                    rollback, "--slurm: starting slurmd on " + n.name);
    if (!pid.ok()) return pid.status();
    n.slurmd_pid = *pid;
  }
  if (Status s = SaveFabricState(*host.fs, state); !s.ok()) return s;
  if (!options.wait_ready) return Status::Ok();
  std::string states;
  Status idle = WaitFor(
      host, timeout,
      [&] {
        auto out = RunChecked(*host.runner, {bin.env, "SLURM_CONF=" + files.Conf(), bin.sinfo,
                                             "--noheader", "--Node", "--format", "%N %t"});
        if (!out.ok()) return false;
        states = *out;
        size_t idle_nodes = 0;
        for (const auto& [node, node_state] : ParseSinfoNodes(*out))
          idle_nodes += node_state == "idle";
        return idle_nodes == state.nodes.size();
      },
      [&] {
        for (const auto& n : state.nodes)
          if (ProcessGone(*host.fs, n.slurmd_pid)) return true;
        return false;
      },
      "a node's slurmd", state.nodes.front().Dir() + "/slurmd.out");
  if (idle.ok()) return idle;
  return Status(idle.code(), "--slurm: " + idle.message() + "; sinfo: " +
                                 (states.empty() ? "no answer from slurmctld" : states));
}

Status CheckSshdInstalled(UpOptions* options) {
  auto sshd = FindInPath("sshd");
  if (!sshd.ok()) {
    // root's PATH has /usr/sbin; another user's may not.
    sshd = FindInPath("/usr/sbin/sshd");
    if (!sshd.ok())
      return ProgramMissing("sshd", "--sshd runs it in every node; apt-get install openssh-server");
  }
  auto keygen = FindInPath("ssh-keygen");
  if (!keygen.ok()) return ProgramMissing("ssh-keygen", "--sshd makes the fabric's keys with it");
  options->sshd_bin = *sshd;
  options->keygen_bin = *keygen;
  return Status::Ok();
}

Status CheckSlurmInstalled(UpOptions* options) {
  auto& bin = options->slurm_bin;
  const std::pair<std::string*, const char*> wanted[] = {{&bin.munged, "munged"},
                                                         {&bin.mungekey, "mungekey"},
                                                         {&bin.slurmctld, "slurmctld"},
                                                         {&bin.slurmd, "slurmd"},
                                                         {&bin.sinfo, "sinfo"},
                                                         {&bin.unshare, "unshare"},
                                                         {&bin.sh, "sh"},
                                                         {&bin.env, "env"}};
  for (const auto& [path, name] : wanted) {
    auto found = FindInPath(name);
    // root's PATH has /usr/sbin; another user's may not.
    if (!found.ok()) found = FindInPath("/usr/sbin/" + std::string(name));
    if (!found.ok()) {
      return ProgramMissing(name,
                            "--slurm runs munged, slurmctld and a slurmd per node; apt-get install "
                            "munge slurmctld slurmd slurm-client (./test.sh installs them)");
    }
    *path = *found;
  }
  return Status::Ok();
}

}  // namespace fdrill
