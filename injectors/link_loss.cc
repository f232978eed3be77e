// link_loss: drops a random share of an interface's packets, optionally only
// those to (egress) or from (ingress) one peer.
//
// Egress (the default) is lost after the sender's stack, as on the wire, so
// TCP retransmits and counts it: egress_loss.h (an nftables netdev egress
// rule forwarding the share to a veth of the fault's own whose peer is down;
// Linux >= 5.16). Ingress is dropped on arrival, which the sender cannot tell
// from wire loss either: a chain of the fault's own (FDRILL-LOSS-<hash>, see
// iptables_chain.h) holding one rule, `[-s PEER] -m statistic --mode random
// --probability P -j DROP` (100 % is a plain DROP), reached by a tagged jump
// from raw PREROUTING `-i IF` (before conntrack, so dropped packets leave no
// state). Capture checks the interface exists and refuses objects already
// there; Verify reads the kernel's ruleset back; Revert deletes what the fault
// made, so it is safe after a failed Apply and safe twice.
// GSO caveat (fault-mechanisms §1.3): egress loss is per skb, and with
// TSO/GSO on the egress hook sees ~64 KB super-packets, so "1 %" drops 1 % of
// super-packets, not of wire packets. For per-packet loss, turn tso/gso off
// on the sender (`ethtool -K IF tso off gso off`) and use direction ingress
// on the receiver, which sees MTU-sized packets.
#include "injectors/egress_loss.h"
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

  const std::string chain = FaultChainName("LOSS", "link_loss", params);
  if (match->egress) {
    return MakeEgressLoss(host, {*ifname, *percent, match->peer, chain.substr(chain.size() - 8)});
  }
  ChainSpec spec;
  spec.table = "raw";
  spec.name = chain;
  spec.comment = "fdrill:link_loss";
  spec.hooks = {{"PREROUTING", "-i", *ifname}};
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

}  // namespace fdrill
