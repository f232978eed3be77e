// The Open MPI 4.1 command line that runs a job across the emulated fabric.
// Run it inside the first node (`fdrill fabric exec n0 -- ...`, or through
// n0's agent), never in the root namespace: mpirun must see the fabric
// addresses as its own.
//
// Why each flag (verified with Open MPI 4.1.4 across namespaces):
//   --mca plm_rsh_agent "<fdrill> fabric rsh"  Open MPI splits the agent on
//       spaces, so the two extra words are passed through; it calls
//       `<agent> <fabric address> <orted command words>` and `fabric rsh`
//       enters that node (net + UTS namespaces, TMPDIR) and runs the words
//       with /bin/sh -c, as sshd would. With many nodes remote orteds call
//       it too (tree spawn) from inside their node; /run/netns is shared.
//   --mca rtc ^hwloc   reported to crash Open MPI 4.1's hwloc shmem across
//       namespaces; not reproduced with per-node hostname + TMPDIR, kept as
//       cheap insurance.
//   --mca pml ob1 --mca btl self,vader,tcp and *_if_include <every rail's /24>
//       keep ranks on plain TCP over the fab* interfaces: without
//       btl_tcp_if_include the TCP BTL stripes over mgmt0 as well
//       (measured), so a fabric fault would not be the only path. With
//       several rails the TCP BTL opens a connection per rail interface and
//       stripes messages over all of them, so a rail fault is a partial
//       failure of the job's transport.
//   --map-by ppr:R:node --bind-to none  R ranks on every node; the emulated
//       nodes share this machine's cores, so pinning would stack ranks.
//   --mca mpi_yield_when_idle 1  for the same reason: busy-polling ranks
//       starve each other (4 MiB all-reduce on 4 nodes / 2 cores: 146 ms
//       busy-polling, 51 ms yielding).
//   No orte_tmpdir_base: it would be forwarded to every orted and override
//       the per-node TMPDIR each orted inherits from `fabric rsh`. Ranks on
//       every node see that node's TMPDIR and hostname, and Open MPI's
//       session directory lands in <TMPDIR>/ompi.<node>.<uid>.
// fdrill_bin must not contain spaces (Open MPI splits the agent on them).
#pragma once

#include <string>
#include <vector>

namespace fdrill {

struct FabricState;  // fabric/fabric_state.h

// "198.18.0.1 slots=R\n198.18.0.2 slots=R\n..." — one line per node, by
// fabric address, first node first (where mpirun runs).
std::string MpirunHostfile(const FabricState& state, int ranks_per_node);
// ... for the nodes at these fabric (rail 0) addresses, in order.
std::string MpirunHostfile(const std::vector<std::string>& fabric_ips, int ranks_per_node);

// Every rail's /24 in CIDR form, comma-separated as Open MPI's
// *_if_include take them: "198.18.0.0/24,198.18.1.0/24".
std::string FabricSubnets(const FabricState& state);

// mpirun argv for nodes x ranks_per_node ranks of program_argv, reading the
// hostfile (MpirunHostfile's contents) at hostfile_path.
std::vector<std::string> MpirunArgv(const FabricState& state, int ranks_per_node,
                                    const std::string& fdrill_bin,
                                    const std::vector<std::string>& program_argv,
                                    const std::string& hostfile_path);
// ... for `nodes` nodes of a fabric whose rails are `rail_subnets` (each
// rail's /24, rail 0 first).
std::vector<std::string> MpirunArgv(size_t nodes, const std::vector<std::string>& rail_subnets,
                                    int ranks_per_node, const std::string& fdrill_bin,
                                    const std::vector<std::string>& program_argv,
                                    const std::string& hostfile_path);

}  // namespace fdrill
