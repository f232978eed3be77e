// `fdrill fabric up --slurm`: Slurm on the emulated fabric, as a cluster
// runs it (Debian's slurm-wlm 22.05 and munge 0.5; see
// ../shared/reference/fault-mechanisms.md, "Slurm on the emulated fabric").
//
// Everything is the fabric's own, under <state_dir>/slurm; the machine's
// munge, /etc/slurm and any Slurm it runs are never touched:
//   munge.key, munge.socket   the fabric's munged (root namespace, its own key
//                             and socket; slurm.conf's AuthInfo names it)
//   slurm.conf                the cluster "fdrill": one partition "fabric"
//                             with every node, whole nodes (CPUs=1 each)
//   ctld/                     slurmctld's StateSaveLocation
//   hosts                     /etc/hosts for slurmctld (below) and the
//                             nodes' names
// slurmctld runs on the controller side under the name kSlurmctldHost, in
// UTS and mount namespaces of its own where that name is its hostname and
// resolves to the management bridge's address: with NoCtldInAddrAny it
// listens there only (198.19.0.254:6817), never on the machine's other
// interfaces. One slurmd per node runs inside the node (its network and UTS
// namespaces: `slurmd -N n2`), spool, pid file and log in the node's
// directory (%n); TmpFS is the node's TMPDIR, so each node's PMIx directory
// is its own (nodes share the machine's /tmp). Clients use the fabric's
// cluster with SLURM_CONF=<state_dir>/slurm/slurm.conf.
#pragma once

#include <string>
#include <vector>

#include "fabric/fabric_state.h"

namespace fdrill {

inline constexpr char kSlurmctldHost[] = "fdrill-ctl";
inline constexpr int kSlurmctldPort = 6817;

struct SlurmFiles {
  std::string dir;  // <state_dir>/slurm
  std::string MungeKey() const { return dir + "/munge.key"; }
  std::string MungeSocket() const { return dir + "/munge.socket"; }
  std::string MungeLog() const { return dir + "/munged.log"; }
  std::string Conf() const { return dir + "/slurm.conf"; }
  std::string CtldState() const { return dir + "/ctld"; }
  std::string CtldLog() const { return dir + "/slurmctld.log"; }
  std::string Hosts() const { return dir + "/hosts"; }
};

inline SlurmFiles SlurmFilesOf(const FabricState& state) { return SlurmFiles{state.slurm_dir}; }

// slurm.conf for `state`'s nodes. Pure.
std::string SlurmConfText(const FabricState& state, const SlurmFiles& files);

// `etc_hosts` plus kSlurmctldHost at the controller's address and each node
// at its management address.
std::string SlurmHostsText(const FabricState& state, const std::string& etc_hosts);

// munged in the foreground with the fabric's key, socket, pid, log and seed.
std::vector<std::string> MungedArgv(const std::string& munged, const SlurmFiles& files);

// unshare --uts --mount, then as kSlurmctldHost with the fabric's hosts over
// /etc/hosts: slurmctld -D -f <slurm.conf>. unshare and sh are absolute.
std::vector<std::string> SlurmctldArgv(const std::string& unshare, const std::string& sh,
                                       const std::string& slurmctld, const SlurmFiles& files);

// slurmd -D -f <slurm.conf> -N <node>, started inside the node.
std::vector<std::string> SlurmdArgv(const std::string& slurmd, const SlurmFiles& files,
                                    const FabricNode& node);

// <node dir>/slurmd: the node's SlurmdSpoolDir (its log is <node
// dir>/slurmd.log, as slurm.conf's SlurmdLogFile says).
inline std::string SlurmdSpool(const FabricNode& node) { return node.Dir() + "/slurmd"; }

// What tells each daemon of this fabric apart on its command line
// (CmdlineContains / FindByCmdline in fabric/inventory.h).
std::string MungedNeedle(const SlurmFiles& files);
std::string SlurmctldNeedle(const SlurmFiles& files);
std::string SlurmdNeedle(const SlurmFiles& files, const std::string& node);

// `sinfo --noheader --Node --format "%N %t"` output -> node -> state
// ("idle", "down*", "alloc", ...).
std::vector<std::pair<std::string, std::string>> ParseSinfoNodes(const std::string& out);

}  // namespace fdrill
