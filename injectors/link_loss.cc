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
#include "injectors/netdev.h"
#include "injectors/param_values.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

class LinkLoss final : public Fault {
 public:
  LinkLoss(Host host, std::string ifname, ChainSpec spec)
      : host_(host),
        ifname_(std::move(ifname)),
        chain_(host.runner, std::move(spec), "link_loss " + ifname_) {}

  Status Capture() override {
    auto link = ReadLink(*host_.runner, ifname_);
    if (!link.ok()) return link.status().Annotate("link_loss");
    return chain_.Capture();
  }
  Json Saved() const override { return chain_.Saved(); }
  Status Load(const Json& saved) override {
    chain_.Load(saved);
    return Status::Ok();
  }
  Status Apply() override { return chain_.Apply(); }
  Status Verify() override { return chain_.Verify(); }
  Status Revert() override { return chain_.Revert(); }
  Status VerifyReverted() override { return chain_.VerifyReverted(); }
  std::string Target() const override { return ifname_; }
  std::vector<std::string> Mechanism() const override { return chain_.Mechanism(); }

 private:
  Host host_;
  std::string ifname_;
  IptablesChain chain_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeLinkLoss(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  auto percent = ReadPercent(p, params, "percent");
  if (!percent.ok()) return percent.status();
  auto direction = p.String("direction", "egress");
  if (!direction.ok()) return direction.status();
  if (*direction != "egress" && *direction != "ingress") {
    return InvalidArgument("params.direction: must be egress or ingress, not \"" + *direction +
                           "\"");
  }
  auto peer = ReadIpv4(p, params, "peer");
  if (!peer.ok()) return peer.status();
  if (auto s = p.Finish(); !s.ok()) return s;

  bool egress = *direction == "egress";
  ChainSpec spec;
  spec.table = egress ? "filter" : "raw";
  spec.name = FaultChainName("LOSS", "link_loss", params);
  spec.comment = "fdrill:link_loss";
  spec.hooks = {{egress ? "OUTPUT" : "PREROUTING", egress ? "-o" : "-i", *ifname}};
  Argv rule;
  if (peer->has_value()) rule = {egress ? "-d" : "-s", **peer};
  if (*percent < 100'000'000) {
    for (const char* a : {"-m", "statistic", "--mode", "random", "--probability"})
      rule.push_back(a);
    rule.push_back(PercentToProbability(*percent));
  }
  rule.push_back("-j");
  rule.push_back("DROP");
  spec.rules = {rule};
  return std::unique_ptr<Fault>(std::make_unique<LinkLoss>(host, *ifname, std::move(spec)));
}

Status ProbeLinkLoss(const Json& params, Host host) {
  if (auto s = ProbeIptables(*host.runner, "link_loss"); !s.ok()) return s;
  if (params.is_object() && params.contains("interface") && params["interface"].is_string()) {
    auto link = ReadLink(*host.runner, params["interface"].get<std::string>());
    if (!link.ok()) return link.status().Annotate("link_loss");
  }
  return Status::Ok();
}

}  // namespace fdrill
