// Capability probes of link_rate, link_flap (link_down and switch_down share
// it), port_loss and link_loss (egress: nft; ingress: iptables),
// kept apart from their injector files: each checks that its iproute2 tool
// runs and, when params name an interface, that the interface exists.
// Kernel features (the tbf qdisc) show up only when Apply runs.
#include "injectors/injector.h"
#include "injectors/iptables_chain.h"
#include "injectors/netdev.h"

namespace fdrill {

namespace {

Status ProbeTool(ProcessRunner& runner, const std::vector<std::string>& argv,
                 const std::string& who) {
  auto r = runner.Run(argv, std::chrono::seconds(5));
  if (!r.ok()) {
    if (IsProgramMissing(r.status())) {
      return Unsupported(who + " needs " + argv[0] + " (" +
                         (argv[0] == "nft" ? "nftables" : "iproute2") +
                         "): " + r.status().message());
    }
    return r.status().Annotate(who);
  }
  if (r->exit_code != 0)
    return Unsupported(who + ": `" + JoinArgv(argv) + "` exited " + std::to_string(r->exit_code));
  return Status::Ok();
}

}  // namespace

Status ProbeLinkRate(const Json& params, Host host) {
  // Over netlink the agent needs no tc; on the tools' path it does.
  if (host.net == nullptr) {
    if (auto s = ProbeTool(*host.runner, {"tc", "-V"}, "link_rate"); !s.ok()) return s;
  }
  return ProbeInterface(host, params, "link_rate");
}

Status ProbePortLoss(const Json& params, Host host) {
  if (auto s = ProbeTool(*host.runner, {"nft", "--version"}, "port_loss"); !s.ok()) return s;
  return ProbeInterface(host, params, "port_loss");
}

Status ProbeLinkLoss(const Json& params, Host host) {
  if (params.is_object() && params.value("direction", "egress") == "ingress")
    return ProbeChainFault(params, host, "link_loss");
  if (auto s = ProbeTool(*host.runner, {"nft", "--version"}, "link_loss"); !s.ok()) return s;
  return ProbeInterface(host, params, "link_loss");
}

Status ProbeLinkFlap(const Json& params, Host host) {
  if (host.net == nullptr) {
    if (auto s = ProbeTool(*host.runner, {"ip", "-V"}, "link_flap"); !s.ok()) return s;
  }
  return ProbeInterface(host, params, "link_flap");
}

}  // namespace fdrill
