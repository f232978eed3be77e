// `fdrill fabric up --sshd`: OpenSSH's sshd in every node, so `mpirun` over
// ssh runs on the emulated fabric as it does on a cluster.
//
// What it makes, all under <state_dir>/ssh (0700), nothing of the machine's
// own ssh touched (/etc/ssh, ~/.ssh, the system sshd):
//   ssh_host_ed25519_key    one host key every node's sshd presents
//   id_ed25519              the controller side's client key
//   authorized_keys         that key, for root on every node
//   known_hosts             every node by name and management address
//   sshd_config             keys only, no PAM, no passwords
//   config                  the client's: `ssh -F <dir>/config n2 hostname`
//   hosts                   this machine's /etc/hosts plus one line per node:
//                           bind it over /etc/hosts in a mount namespace of
//                           your own (`unshare -m`), and n0..n<N-1> resolve as
//                           on a cluster (the controller dials agents by name)
// Each node's sshd runs inside the node (its network and UTS namespaces:
// `hostname` there says n2), listening on its management address port 22,
// with its pid file and log in the node's directory and TMPDIR set for its
// sessions to the node's TMPDIR (sshd_config SetEnv), so what mpirun starts
// there writes where that node's agent looks.
#pragma once

#include <string>
#include <vector>

#include "common/host/host.h"
#include "fabric/fabric_state.h"

namespace fdrill {

inline constexpr int kSshPort = 22;

struct SshFiles {
  std::string dir;  // <state_dir>/ssh
  std::string HostKey() const { return dir + "/ssh_host_ed25519_key"; }
  std::string ClientKey() const { return dir + "/id_ed25519"; }
  std::string AuthorizedKeys() const { return dir + "/authorized_keys"; }
  std::string KnownHosts() const { return dir + "/known_hosts"; }
  std::string SshdConfig() const { return dir + "/sshd_config"; }
  std::string ClientConfig() const { return dir + "/config"; }
  std::string Hosts() const { return dir + "/hosts"; }
};

inline SshFiles SshFilesOf(const FabricState& state) { return SshFiles{state.ssh_dir}; }

// The sshd_config every node's sshd reads (the per-node settings are on its
// command line: SshdArgv). Pure.
std::string SshdConfigText(const SshFiles& files);

// The client's config: a Host block per node (HostName = its management
// address) and the fabric's key, known_hosts and strict checking for all.
std::string SshClientConfigText(const FabricState& state, const SshFiles& files);

// known_hosts: "n0,198.19.0.1 <host key>" per node; host_pub is the .pub
// file's text ("ssh-ed25519 AAAA... comment").
std::string KnownHostsText(const FabricState& state, const std::string& host_pub);

// `etc_hosts` (this machine's /etc/hosts) with "<mgmt ip> <node>" per node
// appended under a comment naming the fabric.
std::string HostsText(const FabricState& state, const std::string& etc_hosts);

// sshd -D -e -f <sshd_config> and the node's ListenAddress, PidFile and
// SetEnv TMPDIR. sshd_path is absolute (sshd re-executes itself by it).
std::vector<std::string> SshdArgv(const std::string& sshd_path, const SshFiles& files,
                                  const FabricNode& node);

// <node dir>/sshd.log: the sshd's own log (-e: to stderr, which goes there).
inline std::string SshdLogPath(const FabricNode& node) { return node.Dir() + "/sshd.log"; }

// True when `pid` is alive and is an sshd started with `-f <sshd_config>`.
bool SshdAlive(SysFs& fs, const std::string& sshd_config, int pid);

// Every live sshd started with `-f <sshd_config>`, found by listing /proc:
// how `fabric down` finds one whose pid fabric.json lost.
std::vector<int> FindSshds(SysFs& fs, const std::string& sshd_config);

}  // namespace fdrill
