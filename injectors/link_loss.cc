// link_loss: drops a random share of an interface's packets, optionally only
// those to (egress) or from (ingress) one peer.
//
// Mechanism: a chain of the fault's own (FDRILL-LOSS-<hash>, see
// iptables_chain.h) holding one rule, `[-d|-s PEER] -m statistic --mode
// random --probability P -j DROP` (100 % is a plain DROP), reached by a
// tagged jump: egress from filter OUTPUT `-o IF`, ingress from raw PREROUTING
// `-i IF` (before conntrack, so dropped packets leave no state). Capture
// checks the interface exists and refuses a chain already there. Verify runs
// `iptables -C` for the rule and the jump: the kernel's ruleset. Revert deletes
// the jump and the chain (and a table the nf_tables backend created for it),
// so it is safe after a failed Apply and safe twice.
// GSO caveat (fault-mechanisms §1.3): egress loss is per skb, and with
// TSO/GSO on the OUTPUT hook sees ~64 KB super-packets, so "1 %" drops 1 % of
// super-packets, not of wire packets. For per-packet loss, turn tso/gso off
// on the sender (`ethtool -K IF tso off gso off`) and use direction ingress
// on the receiver, which sees MTU-sized packets. On µs-RTT veths even a few
// percent barely dents TCP throughput; pair it with link_rate to see it.
#include "injectors/injector.h"
#include "injectors/iptables_chain.h"
#include "injectors/param_values.h"
#include "injectors/params.h"

namespace fdrill {

Result<std::unique_ptr<Fault>> MakeLinkLoss(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  auto percent = ReadPercent(p, params, "percent");
  if (!percent.ok()) return percent.status();
  auto match = ReadPeerDirection(p, params);
  if (!match.ok()) return match.status();
  if (auto s = p.Finish(); !s.ok()) return s;

  bool egress = match->egress;
  ChainSpec spec;
  spec.table = egress ? "filter" : "raw";
  spec.name = FaultChainName("LOSS", "link_loss", params);
  spec.comment = "fdrill:link_loss";
  spec.hooks = {{egress ? "OUTPUT" : "PREROUTING", egress ? "-o" : "-i", *ifname}};
  Argv rule = match->PeerMatch();
  if (*percent < 100'000'000) {
    for (const char* a : {"-m", "statistic", "--mode", "random", "--probability"})
      rule.push_back(a);
    rule.push_back(PercentToProbability(*percent));
  }
  rule.push_back("-j");
  rule.push_back("DROP");
  spec.rules = {rule};
  return std::unique_ptr<Fault>(
      std::make_unique<ChainFault>(host, "link_loss", *ifname, *ifname, std::move(spec)));
}

Status ProbeLinkLoss(const Json& params, Host host) {
  return ProbeChainFault(params, host, "link_loss");
}

}  // namespace fdrill
