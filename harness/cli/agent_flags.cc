#include "harness/cli/agent_flags.h"

#include "common/tls/certs.h"

namespace fdrill {

void AgentFlags::Add(CLI::App* cmd) {
  if (fabric_dir.empty()) fabric_dir = DefaultFabricDir();
  cmd->add_option("--hosts", hosts_file,
                  "hosts file: hostlist expressions like gpu[001-128], one or more per line");
  cmd->add_flag("--slurm", slurm, "the nodes of this Slurm allocation (SLURM_JOB_NODELIST)");
  cmd->add_option("--port", port, "the agents' port on real nodes")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--fabric-dir", fabric_dir,
                  "emulated fabric state directory (without --hosts/--slurm)")
      ->capture_default_str();
  cmd->add_option("--tls-dir", tls_dir,
                  "ca.pem and controller.pem/.key (default: the emulated fabric's pki; real nodes: "
                  "/etc/fdrill/pki)");
  cmd->add_flag("--insecure", insecure, "talk plaintext to agents started with --insecure");
}

Result<AgentFlags::Resolved> AgentFlags::Resolve() const {
  std::string pki;  // the emulated fabric's, when that is where the agents are
  auto agents = ResolveAgents(hosts_file, slurm, static_cast<uint16_t>(port), fabric_dir, &pki,
                              with_switches);
  if (!agents.ok()) return agents.status();
  const bool real = !hosts_file.empty() || slurm;
  auto tls = ControllerTls(
      tls_dir.empty() && real && !insecure ? std::string(kDefaultPkiDir) : tls_dir, insecure, pki);
  if (!tls.ok()) return tls.status();
  return Resolved{std::move(*agents), *tls};
}

}  // namespace fdrill
