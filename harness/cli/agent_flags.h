// The flags that say which agents a command talks to, shared by `fdrill
// inventory` and `fdrill panic`:
//   --hosts FILE     hostlist lines (gpu[001-128]); agents dialled by name
//   --slurm          the nodes of SLURM_JOB_NODELIST (inside salloc/sbatch)
//   --port N         the agents' port on real nodes (default 7100)
//   --fabric-dir D   the emulated fabric (the default when neither of the above)
//   --tls-dir D      ca.pem + controller.pem/.key (default: the emulated
//                    fabric's pki; on real nodes /etc/fdrill/pki)
//   --insecure       plaintext, for agents started with --insecure
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/tls/tls_config.h"
#include "harness/controller/agent_set.h"

namespace fdrill {

struct AgentFlags {
  std::string hosts_file;
  bool slurm = false;
  int port = 7100;
  std::string fabric_dir;
  std::string tls_dir;
  bool insecure = false;
  bool with_switches = false;  // the emulated fabric's switch agents too (panic)

  void Add(CLI::App* cmd);
  struct Resolved {
    std::vector<AgentAddress> agents;
    std::optional<TlsConfig> tls;  // none: --insecure
  };
  Result<Resolved> Resolve() const;
};

}  // namespace fdrill
