#include "common/host/programs.h"

#include <unistd.h>

#include <cstdlib>

namespace fdrill {

namespace {

using enum ProgramNeed;

// One row per program. A package marked Essential or Priority: required in
// Debian is on every Debian 12 system (debootstrap's minbase has them), so
// the set-up need not list it; tests/core/programs_test.cc checks which.
constexpr ExternalProgram kPrograms[] = {
    // The agent's injectors and telemetry, and the emulated fabric.
    // The agent changes and reads links, neighbours and qdiscs over rtnetlink
    // (common/host/netlink_net_stack.h); `ip`/`tc` are what `fdrill plan`
    // prints for the same change, and what runs where a host has no netlink.
    {"ip", "iproute2", kSetUp,
     "fabric up/down, the agent's management interface at start, egress_loss's veth hole; "
     "link_flap/link_down's neighbour entries (`ip neigh`) where a host has no netlink; "
     "tests read the agent's link and neighbour changes back with it"},
    {"tc", "iproute2", kSetUp,
     "fabric up (the modelled switch ports' tbf); tests read the agent's netlink qdiscs back with "
     "it"},
    {"dcb", "iproute2", kSetUp, "roce_tc_rate (ETS maxrate), roce_pfc (PFC)"},
    {"ethtool", "ethtool", kSetUp, "link_speed"},
    {"iptables", "iptables", kSetUp,
     "link_loss (ingress), link_partition, link_delay's NFQUEUE rules"},
    {"iptables-save", "iptables", kSetUp, "netfilter snapshots and the residue check"},
    {"nft", "nftables", kSetUp,
     "link_loss's egress and port_loss's tables; deletes the table iptables-nft created for a "
     "fault once it is empty again",
     "revert leaves that table empty with ACCEPT base chains (no rule, no effect); "
     "InjectorsE2e.WithoutNft*, LinkLoss.LegacyBackendAndMissingNftLeaveTablesAlone"},
    {"ibportstate", "infiniband-diags", kSetUp, "ib_port faults (nodes with an HCA)"},
    {"ibnetdiscover", "infiniband-diags", kSetUp,
     "ib_switch_port: finds the switch port facing an HCA (`-p`, the ports report)"},
    {"smpquery", "infiniband-diags", kSetUp, "ib_switch_port: a switch port's PortInfo state"},
    {"kill", "procps", kSetUp, "`fdrill fabric up/down`: ends the agents it started, by pid"},
    {"umount", "mount", kSetUp, "`fdrill fabric down`: a node's UTS namespace file"},
    {"mount", "mount", kSetUp,
     "tests/e2e/launcher_e2e_test.cc binds the fabric's hosts file over /etc/hosts in a mount "
     "namespace of its own"},
    {"pgrep", "procps", kSetUp, "tests/e2e/launcher_e2e_test.cc: no sshd of the fabric is left"},
    {"unshare", "util-linux", kSetUp, "`fdrill fabric up`: a node's own hostname"},
    {"hostname", "hostname", kSetUp, "`fdrill fabric up`: a node's own hostname"},
    {"install", "coreutils", kSetUp, "`fdrill fabric up`: the fabric's state directory"},
    {"mkdir", "coreutils", kSetUp,
     "`fdrill fabric up`: a node's state directory, /etc/fdrill and /var/lib/fdrill"},
    {"rmdir", "coreutils", kSetUp,
     "`fdrill fabric down`: the /etc/fdrill, /var/lib/fdrill that `up` made, when empty"},
    {"touch", "coreutils", kSetUp,
     "`fdrill fabric up`: the file a node's UTS namespace is bound to"},
    {"rm", "coreutils", kSetUp, "`fdrill fabric down`: the fabric's state directory"},
    // The workload's launchers.
    {"mpirun", "openmpi-bin", kSetUp,
     "the workload launcher (emulated fabric and `launcher: mpirun`)"},
    {"srun", "slurm-client", kSetUp, "`launcher: srun` inside a Slurm allocation"},
    {"ssh", "openssh-client", kSetUp, "mpirun's default plm_rsh_agent on real clusters"},
    {"sshd", "openssh-server", kSetUp,
     "`fdrill fabric up --sshd`: one in every node, so mpirun runs over real ssh"},
    {"ssh-keygen", "openssh-client", kSetUp, "`fdrill fabric up --sshd`: the fabric's keys"},
    {"munged", "munge", kSetUp, "`fdrill fabric up --slurm`: the fabric's own munge daemon"},
    {"mungekey", "munge", kSetUp, "`fdrill fabric up --slurm`: the fabric's munge key"},
    {"slurmctld", "slurmctld", kSetUp, "`fdrill fabric up --slurm`: the fabric's controller"},
    {"slurmd", "slurmd", kSetUp, "`fdrill fabric up --slurm`: one in every node"},
    {"sinfo", "slurm-client", kSetUp,
     "`fdrill fabric up --slurm` waits until every node is idle; a drill on a Slurm fabric "
     "records what Slurm says of its nodes (controller/slurm_watch.h)"},
    {"squeue", "slurm-client", kSetUp,
     "a drill inside an allocation records its job's state (controller/slurm_watch.h); "
     "`fdrill plan` reads its time left (controller/slurm_time_left.h)"},
    {"salloc", "slurm-client", kSetUp, "tests/e2e/launcher_e2e_test.cc: the drill's allocation"},
    {"scontrol", "slurm-client", kSetUp,
     "the guide's real-cluster section (docs/guide/04) lists nodes with it "
     "(tests/e2e/readme_cluster_e2e_test.cc)"},
    {"scp", "openssh-client", kSetUp,
     "the guide's real-cluster section copies certificates to the nodes (ReadmeCluster)"},
    {"bash", "bash", kSetUp, "tests/e2e/readme_cluster_e2e_test.cc runs the guide's blocks"},
    {"timeout", "coreutils", kSetUp, "ReadmeCluster waits for the agents to listen"},
    {"env", "coreutils", kSetUp, "`fdrill fabric up --slurm`: sinfo with SLURM_CONF"},
    {"sh", "dash", kSetUp,
     "`fdrill fabric up --slurm`: slurmctld under its own hostname; tests' shell lines"},
    // This project's own programs, run by path.
    {"fdrill-agent", "", kBuilt, "`fdrill fabric up` starts one per node"},
    {"fdrill-collective", "", kBuilt, "the workload every rank runs"},
    {"fdrill-train-ref", "", kBuilt, "the rollback drill's fault-free digest"},
    {"fdrill-burn", "", kBuilt, "cpu_hog and mem_pressure"},
    // The set-up, the tests and the scripts.
    {"apt-get", "apt", kSetUp, "scripts/setup-common.sh installs the packages"},
    {"dpkg-query", "dpkg", kSetUp, "scripts/setup-common.sh, tests/core/programs_test.cc"},
    {"tee", "coreutils", kSetUp,
     "scripts/setup-common.sh writes policy-rc.d (packages installed, no service started)"},
    {"chmod", "coreutils", kSetUp, "scripts/setup-common.sh makes policy-rc.d executable"},
    {"dpkg", "dpkg", kSetUp, "tests/packaging/deb_test.sh installs and purges the .deb"},
    {"dpkg-deb", "dpkg", kSetUp, "tests/packaging/deb_test.sh reads the .deb"},
    {"cmake", "cmake", kSetUp, "the build"},
    {"ctest", "cmake", kSetUp, "./test.sh runs the tests"},
    {"cpack", "cmake", kSetUp, "the .deb (tests/packaging/deb_test.sh)"},
    // cpack's DEB generator runs these for CPACK_DEBIAN_PACKAGE_SHLIBDEPS;
    // without `file` it stops ("file utility is not available").
    {"file", "file", kSetUp, "cpack -G DEB: which installed files are ELF"},
    {"dpkg-shlibdeps", "dpkg-dev", kSetUp, "cpack -G DEB: the .deb's library Depends"},
    {"ninja", "ninja-build", kSetUp, "the build"},
    {"clang", "clang", kSetUp, "scripts/fuzz.sh builds the libFuzzer targets"},
    {"clang-format", "clang-format", kSetUp,
     "./test.sh checks the format (scripts/format.sh --check)"},
    {"chromium", "chromium", kSetUp, "tests/reports/report_browser_test.cc renders report.html"},
    {"cat", "coreutils", kSetUp, "tests: reads /proc inside a test's network namespace"},
    {"test", "coreutils", kSetUp, "tests: checks a path inside a test's network namespace"},
    {"ss", "iproute2", kSetUp,
     "bench/agent_bench.sh and ReadmeCluster wait for the agents to listen"},
    {"jq", "jq", kSetUp, "bench/detection_latency.sh reads the run's events"},
    {"awk", "mawk", kSetUp, "bench/*.sh and tests/packaging/*.sh pick fields"},
    {"systemd-analyze", "systemd", kOptional,
     "tests/packaging/deb_test.sh verifies the systemd unit",
     "deb_test.sh prints that the unit was not verified and checks the rest"},
    {"promtool", "prometheus", kOptional, "tests/agents/prometheus_test.cc lints /metrics",
     "the test's own strict exposition checker still runs and it says promtool was absent"},
    {"debootstrap", "debootstrap", kScript,
     "scripts/fresh-machine-check.sh builds a Debian 12 root", "",
     "scripts/fresh-machine-check.sh"},
    {"ib_write_bw", "perftest", kScript,
     "scripts/hw-validate.sh: the RDMA transfer an IB or RoCE mechanism is measured on", "",
     "scripts/hw-validate.sh"},
};

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::span<const ExternalProgram> ExternalPrograms() { return kPrograms; }

const ExternalProgram* FindExternalProgram(std::string_view name) {
  std::string_view base = BaseName(name);
  for (const auto& p : kPrograms) {
    if (p.name == base) return &p;
  }
  return nullptr;
}

Status ProgramMissing(std::string_view program, std::string_view why) {
  std::string message = std::string(program) + " is not installed";
  const ExternalProgram* row = FindExternalProgram(program);
  if (row != nullptr && !row->package.empty()) {
    message += " (Debian package " + std::string(row->package) + ")";
  } else if (row != nullptr) {
    message += " (it is built with fdrill: build/bin, or the fdrill package)";
  }
  if (!why.empty()) message += ": " + std::string(why);
  return NotInstalled(std::move(message));
}

Result<std::string> FindInPath(std::string_view program) {
  if (program.empty()) return InvalidArgument("empty program name");
  if (program.find('/') != std::string_view::npos) {
    std::string path(program);
    if (access(path.c_str(), X_OK) == 0) return path;
    return ProgramMissing(program);
  }
  const char* env = std::getenv("PATH");
  std::string_view dirs = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    std::string path =
        (dir.empty() ? std::string(".") : std::string(dir)) + "/" + std::string(program);
    if (access(path.c_str(), X_OK) == 0) return path;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return ProgramMissing(program);
}

}  // namespace fdrill
