// Observing network interfaces through iproute2's JSON output, shared by the
// network injectors and the agent's fabric snapshot.
//   `ip -j link show dev IF`      -> [{"ifname", "flags": [.. "UP" ..], "operstate",
//                                     "master" (a bridge port's bridge)}]
//   `tc -j qdisc show dev IF root` -> [{"kind", "handle", "root": true, "options"}]
// tc reports tbf "rate" in bytes per second.
#pragma once

#include <string>
#include <vector>

#include "harness/core/json.h"
#include "harness/core/result.h"
#include "harness/host/host.h"
#include "injectors/toggle_fault.h"

namespace fdrill {

struct LinkState {
  std::string name;
  bool admin_up = false;  // IFF_UP: what `ip link set up/down` changes
  std::string operstate;  // "UP", "DOWN", "LOWERLAYERDOWN", ...
  std::string master;     // the bridge it is a port of ("br0"); "" for none
};

struct RootQdisc {
  std::string kind;    // "noqueue", "tbf", ...
  std::string handle;  // "0:", "fd1:"
  Json options = Json::object();
};

// One qdisc of an interface's tree, as `tc -j qdisc show dev IF` lists it:
// the root, then each child with its parent ("1:1"). A classful qdisc's
// default child (tbf's own bfifo) is not listed: it is not in the tree tc
// can address.
struct Qdisc {
  std::string kind;
  std::string handle;
  std::string parent;  // "" for the root
  Json options = Json::object();
  bool operator==(const Qdisc&) const = default;
};
Result<std::vector<Qdisc>> ReadQdiscs(ProcessRunner& runner, const std::string& ifname);

// NotFound naming the interface and listing the ones that exist.
Result<LinkState> ReadLink(ProcessRunner& runner, const std::string& ifname);
// For capability probes: Ok when params.interface is absent (or not a
// string) or names an interface here; else ReadLink's NotFound, prefixed by
// `who` ("link_loss").
Status ProbeInterface(ProcessRunner& runner, const Json& params, const std::string& who);
Result<RootQdisc> ReadRootQdisc(ProcessRunner& runner, const std::string& ifname);
Result<std::vector<LinkState>> ListLinks(ProcessRunner& runner);

// AdminLink: the administrative (IFF_UP) state of one interface as the link
// faults change it with `ip link set dev IF up|down`, as a Toggle
// (toggle_fault.h: link_down's OffFault, link_flap's FlapFault). Capture
// refuses a link that is already down (a fault on a dead link proves
// nothing, and "up" would not be a restore); Restore brings back what
// Capture saw and is safe twice, after a failed Set, and on an interface that
// has gone away. `kind` prefixes messages ("link_flap fab0: ...").
class AdminLink final : public Toggle {
 public:
  AdminLink(ProcessRunner* runner, std::string kind, std::string ifname)
      : runner_(runner), kind_(std::move(kind)), ifname_(std::move(ifname)) {}

  Status Capture() override;
  Json Saved() const override { return {{"prior_up", prior_up_}}; }
  void Load(const Json& saved) override { prior_up_ = saved.value("prior_up", true); }
  Status Set(bool up) override;
  // Observes IFF_UP; `why` names the expectation in the message.
  Status Expect(bool up, const std::string& why) override;
  Status Restore() override;
  Status VerifyRestored() override { return Expect(prior_up_, "as found"); }
  std::vector<std::string> Argv(bool up) const override;
  std::string Name() const override { return ifname_; }

 private:
  ProcessRunner* runner_;
  std::string kind_;
  std::string ifname_;
  bool prior_up_ = true;
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
Result<std::string> ReadDefaultRootQdisc(ProcessRunner& runner, const std::string& ifname,
                                         const std::string& who, const std::string& advice);
// `tc qdisc del dev IF root`, run only while the root qdisc carries `handle`:
// safe after a failed Apply and safe twice; an interface that has gone away
// has nothing of ours left on it.
std::vector<std::string> DeleteRootQdiscArgv(const std::string& ifname);
Status DeleteOwnRootQdisc(ProcessRunner& runner, const std::string& ifname,
                          const std::string& handle, const std::string& who);
// Observes that the root qdisc no longer carries `handle` and is of
// `prior_kind` again ("" when Capture never ran: any kind).
Status ExpectPriorRootQdisc(ProcessRunner& runner, const std::string& ifname,
                            const std::string& handle, const std::string& prior_kind,
                            const std::string& who);

}  // namespace fdrill
