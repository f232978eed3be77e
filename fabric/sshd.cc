#include "fabric/sshd.h"

#include "fabric/inventory.h"

namespace fdrill {

std::string SshdConfigText(const SshFiles& files) {
  // Settings every node shares; sshd_config(5) of OpenSSH 9.2 (Debian 12).
  return "# Written by `fdrill fabric up --sshd`. One sshd per node reads it; each is\n"
         "# started with its own ListenAddress, PidFile and SetEnv TMPDIR (-o).\n"
         "HostKey " +
         files.HostKey() +
         "\n"
         "AuthorizedKeysFile " +
         files.AuthorizedKeys() +
         "\n"
         "PermitRootLogin prohibit-password\n"
         "PubkeyAuthentication yes\n"
         "PasswordAuthentication no\n"
         "KbdInteractiveAuthentication no\n"
         "UsePAM no\n"
         "X11Forwarding no\n"
         "AllowTcpForwarding no\n"
         "PrintMotd no\n"
         "PrintLastLog no\n"
         // mpirun opens one connection per node at once; the default
         // (10:30:100) starts dropping them at ten unauthenticated.
         "MaxStartups 200\n"
         // scp (OpenSSH 9 copies over SFTP) and sftp, built into sshd.
         "Subsystem sftp internal-sftp\n"
         "LogLevel INFO\n";
}

std::string SshClientConfigText(const FabricState& state, const SshFiles& files) {
  std::string out =
      "# Written by `fdrill fabric up --sshd`: ssh -F " + files.ClientConfig() + " n0 hostname\n";
  for (const auto& n : state.nodes) out += "Host " + n.name + "\n  HostName " + n.MgmtIp() + "\n";
  out +=
      "Host *\n"
      "  User root\n"
      "  Port " +
      std::to_string(kSshPort) +
      "\n"
      "  IdentityFile " +
      files.ClientKey() +
      "\n"
      "  IdentitiesOnly yes\n"
      "  UserKnownHostsFile " +
      files.KnownHosts() +
      "\n"
      "  GlobalKnownHostsFile /dev/null\n"
      "  StrictHostKeyChecking yes\n"
      "  BatchMode yes\n"
      "  ConnectTimeout 10\n"
      "  LogLevel ERROR\n";
  return out;
}

std::string KnownHostsText(const FabricState& state, const std::string& host_pub) {
  // "ssh-ed25519 AAAA... comment": the key type and key, not the comment.
  std::string key = host_pub;
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  const size_t first = key.find(' ');
  const size_t second = first == std::string::npos ? first : key.find(' ', first + 1);
  if (second != std::string::npos) key.resize(second);
  std::string out;
  for (const auto& n : state.nodes) out += n.name + "," + n.MgmtIp() + " " + key + "\n";
  return out;
}

std::string HostsText(const FabricState& state, const std::string& etc_hosts) {
  std::string out = etc_hosts;
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "# the emulated fabric's nodes (" + state.state_dir + "), management addresses\n";
  for (const auto& n : state.nodes) out += n.MgmtIp() + " " + n.name + "\n";
  return out;
}

std::vector<std::string> SshdArgv(const std::string& sshd_path, const SshFiles& files,
                                  const FabricNode& node) {
  return {sshd_path,
          "-D",
          "-e",
          "-f",
          files.SshdConfig(),
          "-o",
          "ListenAddress=" + node.MgmtIp() + ":" + std::to_string(kSshPort),
          "-o",
          "PidFile=" + node.Dir() + "/sshd.pid",
          "-o",
          "SetEnv=TMPDIR=" + node.tmpdir};
}

// sshd rewrites its process title ("sshd: /usr/sbin/sshd -D -e -f CONF ...
// [listener] 0 of 10-100 startups"): CmdlineContains matches it either way.
bool SshdAlive(SysFs& fs, const std::string& sshd_config, int pid) {
  return !sshd_config.empty() && CmdlineContains(fs, pid, " -f " + sshd_config + " ");
}

std::vector<int> FindSshds(SysFs& fs, const std::string& sshd_config) {
  if (sshd_config.empty()) return {};
  return FindByCmdline(fs, " -f " + sshd_config + " ");
}

}  // namespace fdrill
