#include "fabric/slurm.h"

#include <sstream>

namespace fdrill {

std::string SlurmConfText(const FabricState& state, const SlurmFiles& files) {
  const std::string ctl = state.controller_addr.substr(0, state.controller_addr.find('/'));
  const std::string d = state.state_dir;
  std::string out =
      "# Written by `fdrill fabric up --slurm`: the emulated fabric's own cluster.\n"
      "# Clients: SLURM_CONF=" +
      files.Conf() +
      " sinfo\n"
      "ClusterName=fdrill\n"
      "SlurmctldHost=" +
      std::string(kSlurmctldHost) + "(" + ctl +
      ")\n"
      "SlurmctldPort=" +
      std::to_string(kSlurmctldPort) +
      "\n"
      "SlurmUser=root\n"
      "SlurmdUser=root\n"
      "AuthType=auth/munge\n"
      "CredType=cred/munge\n"
      "AuthInfo=socket=" +
      files.MungeSocket() +
      "\n"
      // slurmctld listens on its host's address only, not on every interface.
      "CommunicationParameters=NoCtldInAddrAny\n"
      "StateSaveLocation=" +
      files.CtldState() +
      "\n"
      "SlurmctldPidFile=" +
      files.dir +
      "/slurmctld.pid\n"
      "SlurmctldLogFile=" +
      files.CtldLog() +
      "\n"
      "SlurmdSpoolDir=" +
      d +
      "/%n/slurmd\n"
      "SlurmdPidFile=" +
      d +
      "/%n/slurmd.pid\n"
      "SlurmdLogFile=" +
      d +
      "/%n/slurmd.log\n"
      // The PMIx plugin makes its per-step directory under TmpFS: per node.
      "TmpFS=" +
      d +
      "/%n/tmp\n"
      // No cgroups: processes are tracked by their parentage.
      "ProctrackType=proctrack/linuxproc\n"
      "TaskPlugin=task/none\n"
      "JobAcctGatherType=jobacct_gather/none\n"
      "AccountingStorageType=accounting_storage/none\n"
      "SelectType=select/linear\n"
      "MpiDefault=none\n"
      // A node that comes back (its slurmd restarted) is used again.
      "ReturnToService=2\n"
      // A node whose slurmd stops answering is DOWN 10 s later (the default
      // 300 s is longer than most drills).
      "SlurmdTimeout=10\n"
      "InactiveLimit=0\n"
      "KillWait=5\n";
  for (const auto& n : state.nodes)
    out += "NodeName=" + n.name + " NodeAddr=" + n.MgmtIp() + " CPUs=1 State=UNKNOWN\n";
  out += "PartitionName=fabric Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
  return out;
}

std::string SlurmHostsText(const FabricState& state, const std::string& etc_hosts) {
  std::string out = etc_hosts;
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "# the emulated fabric's Slurm controller and nodes (" + state.state_dir + ")\n";
  out += state.controller_addr.substr(0, state.controller_addr.find('/')) + " " + kSlurmctldHost +
         "\n";
  for (const auto& n : state.nodes) out += n.MgmtIp() + " " + n.name + "\n";
  return out;
}

std::vector<std::string> MungedArgv(const std::string& munged, const SlurmFiles& files) {
  // --force: it runs as root (a distribution's munged runs as "munge").
  return {munged,
          "--foreground",
          "--force",
          "--key-file",
          files.MungeKey(),
          "--socket",
          files.MungeSocket(),
          "--pid-file",
          files.dir + "/munged.pid",
          "--log-file",
          files.MungeLog(),
          "--seed-file",
          files.dir + "/munged.seed"};
}

std::vector<std::string> SlurmctldArgv(const std::string& unshare, const std::string& sh,
                                       const std::string& slurmctld, const SlurmFiles& files) {
  return {unshare,
          "--uts",
          "--mount",
          "--propagation",
          "private",
          sh,
          "-c",
          std::string("hostname ") + kSlurmctldHost + " && mount --bind " + files.Hosts() +
              " /etc/hosts && exec " + slurmctld + " -D -f " + files.Conf()};
}

std::vector<std::string> SlurmdArgv(const std::string& slurmd, const SlurmFiles& files,
                                    const FabricNode& node) {
  return {slurmd, "-D", "-f", files.Conf(), "-N", node.name};
}

std::string MungedNeedle(const SlurmFiles& files) {
  return " --key-file " + files.MungeKey() + " ";
}

std::string SlurmctldNeedle(const SlurmFiles& files) { return " -D -f " + files.Conf() + " "; }

std::string SlurmdNeedle(const SlurmFiles& files, const std::string& node) {
  return " -f " + files.Conf() + " -N " + node + " ";
}

std::vector<std::pair<std::string, std::string>> ParseSinfoNodes(const std::string& out) {
  std::vector<std::pair<std::string, std::string>> nodes;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string node, state;
    if (words >> node >> state) nodes.emplace_back(node, state);
  }
  return nodes;
}

}  // namespace fdrill
