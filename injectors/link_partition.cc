// link_partition: cuts this node off from a set of peers, both ways: a
// silent blackhole, as when a cable far away is pulled and no carrier drops.
//
// Mechanism: a chain of the fault's own (FDRILL-PART-<hash>, see
// iptables_chain.h) in the filter table, reached by tagged jumps from INPUT
// and OUTPUT (only `-i`/`-o IF` when `interface` is given), holding for each
// peer `-s PEER -j DROP` and `-d PEER -j DROP`: from INPUT a packet from a
// peer matches -s, from OUTPUT one to a peer matches -d. The other node sees
// no error, only silence, so its transport times out (TCP RTO, MPI
// keepalive: fault-mechanisms §1.4, §5.18). Capture refuses a chain already
// there. Verify runs `iptables -C` for every rule and jump: the kernel's
// ruleset, not our intent. Revert deletes the jumps and the chain (and a
// table the nf_tables backend created for it); safe after a failed Apply
// and safe twice.
#include "injectors/injector.h"
#include "injectors/iptables_chain.h"
#include "injectors/param_values.h"
#include "injectors/params.h"

namespace fdrill {

Result<std::unique_ptr<Fault>> MakeLinkPartition(const Json& params, Host host) {
  ParamReader p(params);
  auto peers = ReadIpv4List(p, params, "peers");
  if (!peers.ok()) return peers.status();
  auto ifname = p.String("interface", "");
  if (!ifname.ok()) return ifname.status();
  if (auto s = p.Finish(); !s.ok()) return s;

  ChainSpec spec;
  spec.table = "filter";
  spec.name = FaultChainName("PART", "link_partition", params);
  spec.comment = "fdrill:link_partition";
  Argv in = {"INPUT"}, out = {"OUTPUT"};
  if (!ifname->empty()) {
    in.insert(in.end(), {"-i", *ifname});
    out.insert(out.end(), {"-o", *ifname});
  }
  spec.hooks = {in, out};
  for (const auto& peer : *peers) {
    spec.rules.push_back({"-s", peer, "-j", "DROP"});
    spec.rules.push_back({"-d", peer, "-j", "DROP"});
  }
  // The target: the interface when given (the agent refuses its management
  // interface), else the peers.
  std::string target = *ifname;
  if (target.empty()) {
    target = "peers:";
    for (size_t i = 0; i < peers->size(); ++i) target += (i ? "," : "") + (*peers)[i];
  }
  return std::unique_ptr<Fault>(
      std::make_unique<ChainFault>(host, "link_partition", *ifname, target, std::move(spec)));
}

Status ProbeLinkPartition(const Json& params, Host host) {
  return ProbeChainFault(params, host, "link_partition");
}

}  // namespace fdrill
