// link_rate: caps an interface's egress with a token-bucket qdisc.
//
// Mechanism: `tc qdisc replace dev IF root handle fd1: tbf rate R burst B
// latency L`. The handle fd1: marks the qdisc as fdrill's. Verify reads
// `tc -j qdisc show` and checks kind tbf, handle fd1: and the rate (tc
// reports bytes/s). Revert acts only while the qdisc is still ours, so it is
// safe after a failed Apply and safe twice.
// What was there decides how it is put back (Capture reads the whole tree):
//  - a kernel default root (noqueue, pfifo_fast, mq, fq_codel): fd1: becomes
//    the root; deleting it brings exactly that default back.
//  - a tbf root H: whose queue is an explicit bfifo/pfifo child at H:1 (the
//    emulated fabric's modelled switch ports: tbf 1: over bfifo 10:): fd1:
//    replaces that child, so the port's own tbf stays untouched and the
//    cap is min(its rate, R); Revert puts the child back with its handle,
//    kind and limit (integers tc round-trips exactly), and VerifyReverted
//    compares the root and the child with what Capture saw. A tbf's burst
//    does not round-trip through tc (it is stored as time: 655360 bytes at
//    500mbit reads back 655312, then 655250), which is why the root is never
//    replaced and re-created.
//  - anything else, a tbf with its built-in queue included: refused; fdrill
//    will not replace a qdisc it cannot restore.
// Burst: veth and GSO hand tbf super-packets of up to 64 KiB, and a packet
// larger than the burst is dropped, so burst defaults to max(128 KiB, 10 ms
// of rate) (DefaultTbfBurstBytes).
//
// Per-peer mode (params.peers): only traffic to those addresses is capped.
//   tc qdisc replace dev IF root handle fd1: htb default 0   (or parent H:1)
//   tc class replace dev IF parent fd1: classid fd1:1 htb rate R ceil R burst B cburst B
//   tc filter add dev IF parent fd1: protocol ip prio 1 u32 match ip dst PEER flowid fd1:1   (per
//   peer)
// Everything else is unshaped: `default 0` names no class, and htb sends
// unclassified packets straight out through its direct queue (sch_htb.c,
// htb_classify: no class for the default minor -> HTB_DIRECT), which avoids
// a catch-all class whose rate would itself be a cap. Verify reads the fd1:
// qdisc (htb), the shaped class (`tc -j class show`: iproute2 6.1
// prints htb classes as text even with -j, "class htb fd1:1 root prio 0
// rate 100Mbit ceil ...", rates in powers of 1000) and the filters
// (`tc -j filter show`: u32 keys as {"value": hex, "mask": hex, "off": 16},
// 16 being the IPv4 destination's offset). Capture and Revert are the tbf
// mode's: removing fd1: takes its classes and filters with it.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/core/json.h"
#include "injectors/injector.h"
#include "injectors/netdev.h"
#include "injectors/param_values.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

constexpr char kHandle[] = "fd1:";
constexpr char kShapedClass[] = "fd1:1";

// "c6120000"/"ffffff00" for 198.18.0.0/24: a u32 dst key as tc -j prints it.
std::pair<std::string, std::string> U32Key(const std::string& peer) {
  unsigned a = 0, b = 0, c = 0, d = 0, len = 32;
  std::sscanf(peer.c_str(), "%u.%u.%u.%u/%u", &a, &b, &c, &d, &len);
  uint32_t mask = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
  uint32_t addr = ((a << 24) | (b << 16) | (c << 8) | d) & mask;
  char value[9], mask_hex[9];
  std::snprintf(value, sizeof(value), "%08x", addr);
  std::snprintf(mask_hex, sizeof(mask_hex), "%08x", mask);
  return {value, mask_hex};
}

Json QdiscJson(const Qdisc& q) {
  return {{"kind", q.kind}, {"handle", q.handle}, {"parent", q.parent}, {"options", q.options}};
}

Qdisc QdiscFromJson(const Json& j) {
  Qdisc q;
  q.kind = j.value("kind", "");
  q.handle = j.value("handle", "");
  q.parent = j.value("parent", "");
  q.options = j.value("options", Json::object());
  return q;
}

std::string Describe(const Qdisc& q) {
  return q.kind + " " + q.handle + (q.parent.empty() ? "" : " (parent " + q.parent + ")") + " " +
         DumpJson(q.options);
}

const Qdisc* ChildOf(const std::vector<Qdisc>& tree, const std::string& parent) {
  for (const auto& q : tree)
    if (q.parent == parent) return &q;
  return nullptr;
}

class LinkRate final : public Fault {
 public:
  LinkRate(Host host, std::string ifname, uint64_t rate, uint64_t burst, Duration latency,
           std::vector<std::string> peers)
      : host_(host),
        ifname_(std::move(ifname)),
        rate_(rate),
        burst_(burst),
        latency_(latency),
        peers_(std::move(peers)) {}

  Status Capture() override {
    NetOf net(host_);
    auto tree = ReadQdiscs(*net, ifname_);
    if (!tree.ok()) return tree.status().Annotate(Who());
    const Qdisc* root = ChildOf(*tree, "");
    if (root == nullptr) return Internal(Who() + ": tc shows no root qdisc");
    if (IsDefaultQdisc(root->kind)) {
      prior_kind_ = root->kind;
      return Status::Ok();
    }
    if (root->kind == "tbf" && root->handle != kHandle) {
      const std::string parent = root->handle + "1";  // "1:" -> its class "1:1"
      const Qdisc* child = ChildOf(*tree, parent);
      if (child != nullptr && (child->kind == "bfifo" || child->kind == "pfifo") &&
          child->options.contains("limit")) {
        parent_ = parent;
        prior_root_ = *root;
        prior_child_ = *child;
        return Status::Ok();
      }
      return FailedPrecondition(
          Who() + ": root qdisc is tbf " + root->handle +
          (child == nullptr ? " with its built-in queue"
                            : " over " + child->kind + " " + child->handle) +
          "; fdrill nests its cap under a tbf only when the tbf's queue is an explicit bfifo or "
          "pfifo it can put back exactly (`tc qdisc add dev " +
          ifname_ + " parent " + parent + " handle 10: bfifo limit BYTES`)");
    }
    return FailedPrecondition(Who() + ": root qdisc is " + root->kind + " (handle " + root->handle +
                              "), not a kernel default or a tbf over a fifo; fdrill will not "
                              "replace a qdisc it cannot restore. Remove it, or run "
                              "`fdrill-agent --revert-all` if a drill left it");
  }

  Json Saved() const override {
    Json j = {{"prior_kind", prior_kind_}};
    if (Nested()) {
      j["parent"] = parent_;
      j["prior_root"] = QdiscJson(prior_root_);
      j["prior_child"] = QdiscJson(prior_child_);
    }
    return j;
  }
  Status Load(const Json& saved) override {
    prior_kind_ = saved.value("prior_kind", "");
    parent_ = saved.value("parent", "");
    if (Nested()) {
      prior_root_ = QdiscFromJson(saved.value("prior_root", Json::object()));
      prior_child_ = QdiscFromJson(saved.value("prior_child", Json::object()));
    }
    return Status::Ok();
  }

  Status Apply() override {
    NetOf net(host_);
    return ApplyEach(*net, ApplySteps(), Who());
  }

  Status Verify() override {
    NetOf net(host_);
    auto tree = ReadQdiscs(*net, ifname_);
    if (!tree.ok()) return tree.status().Annotate(Who());
    const Qdisc* q = ChildOf(*tree, parent_);
    if (q == nullptr) return FailedPrecondition(Who() + ": no qdisc at " + Where());
    if (!peers_.empty()) return VerifyPerPeer(*net, *q);
    uint64_t bytes_per_sec = q->options.value("rate", uint64_t{0});
    if (q->kind != "tbf" || q->handle != kHandle || bytes_per_sec * 8 != rate_) {
      return FailedPrecondition(Who() + ": " + Where() + " qdisc is " + q->kind + " " + q->handle +
                                " at " + std::to_string(bytes_per_sec * 8) +
                                " bit/s, expected tbf " + kHandle + " at " + std::to_string(rate_) +
                                " bit/s");
    }
    return Status::Ok();
  }

  Status Revert() override {
    NetOf net(host_);
    if (!Nested()) return DeleteOwnRootQdisc(*net, ifname_, kHandle, Who());
    auto tree = ReadQdiscs(*net, ifname_);
    if (!tree.ok()) {
      return tree.status().code() == StatusCode::kNotFound ? Status::Ok()
                                                           : tree.status().Annotate(Who());
    }
    const Qdisc* child = ChildOf(*tree, parent_);
    if (child == nullptr || child->handle != kHandle) return Status::Ok();  // not ours (now)
    Status s = net->Apply(RestoreChild());
    return s.ok() ? s : s.Annotate(Who());
  }

  Status VerifyReverted() override {
    NetOf net(host_);
    if (!Nested()) return ExpectPriorRootQdisc(*net, ifname_, kHandle, prior_kind_, Who());
    auto tree = ReadQdiscs(*net, ifname_);
    if (!tree.ok()) return tree.status().Annotate(Who());
    const Qdisc* root = ChildOf(*tree, "");
    const Qdisc* child = ChildOf(*tree, parent_);
    if (root == nullptr || !(*root == prior_root_)) {
      return FailedPrecondition(Who() + ": root qdisc is " + (root ? Describe(*root) : "missing") +
                                ", expected " + Describe(prior_root_) + " as found");
    }
    if (child == nullptr || !(*child == prior_child_)) {
      return FailedPrecondition(Who() + ": " + parent_ + " holds " +
                                (child ? Describe(*child) : "nothing") + ", expected " +
                                Describe(prior_child_) + " as found");
    }
    return Status::Ok();
  }

  std::string Target() const override { return ifname_; }
  std::vector<std::string> Mechanism() const override {
    std::vector<std::string> out;
    for (const auto& change : ApplySteps()) out.push_back("apply: " + JoinArgv(change.Argv()));
    out.push_back(
        "revert: " +
        JoinArgv((Nested() ? RestoreChild() : NetChange::DeleteRootQdisc(ifname_)).Argv()));
    // Before Capture (fdrill plan) the tree is not known yet.
    if (!Nested() && prior_kind_.empty()) {
      out.push_back(
          "note: where the root is a tbf H: over a fifo (a modelled switch port), "
          "parent H:1 instead of root; the tbf stays and revert puts the fifo back");
    }
    return out;
  }

 private:
  std::string Who() const { return "link_rate " + ifname_; }
  // Under a tbf's class (its fifo replaced) rather than at the root.
  bool Nested() const { return !parent_.empty(); }
  std::string Where() const { return Nested() ? "parent " + parent_ : "root"; }
  // Where fd1: goes: "" (the root) or the tbf's class.
  std::string At() const { return Nested() ? parent_ : ""; }
  // The fifo Capture found under the tbf, as it was: handle, kind, limit.
  NetChange RestoreChild() const {
    return NetChange::Fifo(ifname_, parent_, prior_child_.handle, prior_child_.kind,
                           prior_child_.options.value("limit", uint64_t{0}));
  }

  std::vector<NetChange> ApplySteps() const {
    if (peers_.empty()) return {NetChange::Tbf(ifname_, At(), kHandle, rate_, burst_, latency_)};
    std::vector<NetChange> steps = {
        NetChange::HtbRoot(ifname_, At(), kHandle),
        NetChange::HtbClassRate(ifname_, kHandle, kShapedClass, rate_, burst_)};
    for (const auto& peer : peers_)
      steps.push_back(NetChange::U32Dst(ifname_, kHandle, peer, kShapedClass));
    return steps;
  }

  Status VerifyPerPeer(NetStack& net, const Qdisc& q) {
    const std::string who = Who();
    if (q.kind != "htb" || q.handle != kHandle) {
      return FailedPrecondition(who + ": " + Where() + " qdisc is " + q.kind + " " + q.handle +
                                ", expected htb " + kHandle);
    }
    auto classes = net.HtbClasses(ifname_);
    if (!classes.ok()) return classes.status().Annotate(who);
    double rate = -1;
    for (const auto& c : *classes) {
      if (c.classid == kShapedClass) rate = static_cast<double>(c.rate_bits);
    }
    if (std::abs(rate - static_cast<double>(rate_)) > static_cast<double>(rate_) / 100) {
      return FailedPrecondition(who + ": htb class " + kShapedClass + " is " +
                                (rate < 0 ? std::string("missing")
                                          : "at " + std::to_string(std::llround(rate)) + " bit/s") +
                                ", expected " + std::to_string(rate_) + " bit/s");
    }
    auto filters = net.U32Filters(ifname_);
    if (!filters.ok()) return filters.status().Annotate(who);
    for (const auto& peer : peers_) {
      auto [value, mask] = U32Key(peer);
      bool found = false;
      for (const auto& f : *filters) {
        found = found ||
                (f.flowid == kShapedClass && f.value == value && f.mask == mask && f.off == 16);
      }
      if (!found) {
        return FailedPrecondition(who + ": no u32 filter sends dst " + peer + " to class " +
                                  kShapedClass);
      }
    }
    return Status::Ok();
  }

  Host host_;
  std::string ifname_;
  uint64_t rate_;
  uint64_t burst_;
  Duration latency_;
  std::vector<std::string> peers_;  // empty: the whole interface (tbf)
  std::string prior_kind_;          // root mode: the kernel default that was there
  std::string parent_;              // nested mode: the tbf's class ("1:1"); "" in root mode
  Qdisc prior_root_;                // nested mode: the tbf, as found
  Qdisc prior_child_;               // nested mode: its fifo, as found
};

Result<std::unique_ptr<LinkRate>> Build(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  auto rate = p.Rate("rate");
  if (!rate.ok()) return rate.status();
  uint64_t default_burst = DefaultTbfBurstBytes(*rate);
  // At least one MTU-sized packet; at most what tc's 32-bit burst holds.
  auto burst = p.Size("burst", default_burst, kTbfBursts);
  if (!burst.ok()) return burst.status();
  auto latency = p.Dur("latency", std::chrono::milliseconds(50),
                       {std::chrono::milliseconds(1), std::chrono::seconds(10)});
  if (!latency.ok()) return latency.status();
  std::vector<std::string> peers;
  if (params.is_object() && params.contains("peers")) {
    auto list = ReadIpv4List(p, params, "peers");
    if (!list.ok()) return list.status();
    peers = *list;
    if (params.contains("latency"))
      return InvalidArgument("params.latency: tbf only; per-peer (htb) mode takes none");
  }
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::make_unique<LinkRate>(host, *ifname, *rate, *burst, *latency, std::move(peers));
}

}  // namespace

Result<std::unique_ptr<Fault>> MakeLinkRate(const Json& params, Host host) {
  auto f = Build(params, host);
  if (!f.ok()) return f.status();
  return std::unique_ptr<Fault>(std::move(*f));
}

}  // namespace fdrill
