// Observing and changing network interfaces through the host's NetStack
// (common/host/net_stack.h: rtnetlink in the agent, iproute2's tools
// where the host has no netlink), shared by the network injectors and the
// agent's fabric snapshot.
#pragma once

#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/host/host.h"
#include "common/host/iproute_net_stack.h"
#include "common/host/net_stack.h"
#include "injectors/link_neighbours.h"
#include "injectors/toggle_fault.h"

namespace fdrill {

struct RootQdisc {
  std::string kind;    // "noqueue", "tbf", ...
  std::string handle;  // "0:", "fd1:"
  Json options = Json::object();
};

Result<std::vector<Qdisc>> ReadQdiscs(NetStack& net, const std::string& ifname);

// NotFound naming the interface and listing the ones that exist.
Result<LinkState> ReadLink(NetStack& net, const std::string& ifname);
// For capability probes: Ok when params.interface is absent (or not a
// string) or names an interface here; else ReadLink's NotFound, prefixed by
// `who` ("link_loss").
Status ProbeInterface(NetStack& net, const Json& params, const std::string& who);
Status ProbeInterface(const Host& host, const Json& params, const std::string& who);
Result<RootQdisc> ReadRootQdisc(NetStack& net, const std::string& ifname);
Result<std::vector<LinkState>> ListLinks(NetStack& net);

// AdminLink: the administrative (IFF_UP) state of one interface as the link
// faults change it with `ip link set dev IF up|down`, as a Toggle
// (toggle_fault.h: link_down's OffFault, link_flap's FlapFault). Capture
// refuses a link that is already down (a fault on a dead link proves
// nothing, and "up" would not be a restore) and snapshots the interface's
// neighbour entries, which the down flushes, PERMANENT ones too
// (link_neighbours.h has the kernel facts and the ~1 s stall they caused
// after a flap). Every up (each flap's up edge, Restore) re-adds them in
// the same call, right after the link is up: PERMANENT as PERMANENT (a
// failure is an error naming the entry), the kernel's own as STALE (best
// effort). Saved/Load carry them in the journal, so a revert after an agent
// restart restores them too; a journal from before has none. Restore brings
// back what Capture saw and is safe twice, after a failed Set, and on an
// interface that has gone away; on a link already up it re-adds only the
// PERMANENT entries that are missing. VerifyRestored observes IFF_UP and the
// PERMANENT entries. `kind` prefixes messages ("link_flap fab0: ...").
class AdminLink final : public Toggle {
 public:
  AdminLink(Host host, std::string kind, std::string ifname)
      : host_(host), kind_(std::move(kind)), ifname_(std::move(ifname)) {}

  Status Capture() override;
  Json Saved() const override {
    return {{"prior_up", prior_up_}, {"neighbours", neighbours_.Saved()}};
  }
  void Load(const Json& saved) override {
    prior_up_ = saved.value("prior_up", true);
    neighbours_.Load(saved.value("neighbours", Json()));
  }
  Status Set(bool up) override;
  // Observes IFF_UP; `why` names the expectation in the message.
  Status Expect(bool up, const std::string& why) override;
  Status Restore() override;
  Status VerifyRestored() override;
  std::vector<std::string> Argv(bool up) const override;
  std::string Name() const override { return ifname_; }

 private:
  Host host_;
  std::string kind_;
  std::string ifname_;
  bool prior_up_ = true;
  LinkNeighbours neighbours_;
};

// The qdiscs the kernel attaches by itself; removing the root qdisc brings
// one of these back, so a fault over them reverts exactly by deletion.
bool IsDefaultQdisc(const std::string& kind);

// A root qdisc a fault puts over a kernel default with `tc qdisc replace dev
// IF root handle H ...` (link_rate's fd1:, link_delay's netem fd2:): the
// handle marks it as the fault's, and deleting it brings the default back.
// `who` ("link_rate fab0") prefixes messages.
//
// The kind of the root qdisc now, which must be a kernel default: fdrill will
// not replace a qdisc it cannot restore. `advice`, when given, ends the
// refusal as a sentence of its own.
Result<std::string> ReadDefaultRootQdisc(NetStack& net, const std::string& ifname,
                                         const std::string& who, const std::string& advice);
// NetChange::DeleteRootQdisc (`tc qdisc del dev IF root`), made only while the root qdisc carries
// `handle`: safe after a failed Apply and safe twice; an interface that has gone away has nothing
// of ours left on it.
Status DeleteOwnRootQdisc(NetStack& net, const std::string& ifname, const std::string& handle,
                          const std::string& who);
// Observes that the root qdisc no longer carries `handle` and is of
// `prior_kind` again ("" when Capture never ran: any kind).
Status ExpectPriorRootQdisc(NetStack& net, const std::string& ifname, const std::string& handle,
                            const std::string& prior_kind, const std::string& who);

}  // namespace fdrill
