#include "injectors/netdev.h"

#include <algorithm>

namespace fdrill {

Result<std::vector<LinkState>> ListLinks(NetStack& net) { return net.Links(); }

Result<LinkState> ReadLink(NetStack& net, const std::string& ifname) {
  auto all = net.Links();
  if (!all.ok()) return all.status();
  std::string names;
  for (const auto& l : *all) {
    if (l.name == ifname) return l;
    names += (names.empty() ? "" : ", ") + l.name;
  }
  return NotFound("no interface \"" + ifname + "\" here (interfaces: " + names + ")");
}

Status ProbeInterface(NetStack& net, const Json& params, const std::string& who) {
  if (!params.is_object() || !params.contains("interface") || !params["interface"].is_string())
    return Status::Ok();
  auto link = ReadLink(net, params["interface"].get<std::string>());
  return link.ok() ? Status::Ok() : link.status().Annotate(who);
}

Status ProbeInterface(const Host& host, const Json& params, const std::string& who) {
  NetOf net(host);
  return ProbeInterface(*net, params, who);
}

Result<std::vector<Qdisc>> ReadQdiscs(NetStack& net, const std::string& ifname) {
  return net.Qdiscs(ifname);
}

Result<RootQdisc> ReadRootQdisc(NetStack& net, const std::string& ifname) {
  auto tree = net.Qdiscs(ifname);
  if (!tree.ok()) return tree.status();
  for (const auto& q : *tree) {
    if (!q.parent.empty()) continue;
    return RootQdisc{q.kind, q.handle, q.options};
  }
  return Internal("no root qdisc on " + ifname);
}

Status AdminLink::Capture() {
  NetOf net(host_);
  auto link = ReadLink(*net, ifname_);
  if (!link.ok()) return link.status().Annotate(kind_);
  if (!link->admin_up)
    return FailedPrecondition(kind_ + " " + ifname_ +
                              ": the link is already administratively down");
  if (auto s = neighbours_.Capture(*net, ifname_); !s.ok())
    return s.Annotate(kind_ + " " + ifname_);
  prior_up_ = true;
  return Status::Ok();
}

std::vector<std::string> AdminLink::Argv(bool up) const {
  return NetChange::LinkUp(ifname_, up).Argv();
}

Status AdminLink::Set(bool up) {
  NetOf net(host_);
  Status s = net->Apply(NetChange::LinkUp(ifname_, up));
  // The up left the neighbour table empty: refill it before any packet needs it.
  if (s.ok() && up) s = neighbours_.ReAdd(*net, ifname_);
  return s.ok() ? s : s.Annotate(kind_ + " " + ifname_);
}

Status AdminLink::Expect(bool up, const std::string& why) {
  NetOf net(host_);
  auto link = ReadLink(*net, ifname_);
  if (!link.ok()) return link.status().Annotate(kind_);
  if (link->admin_up != up) {
    return FailedPrecondition(kind_ + " " + ifname_ + ": link is " +
                              (link->admin_up ? "up" : "down") + ", expected " +
                              (up ? "up" : "down") + " (" + why + ")");
  }
  return Status::Ok();
}

Status AdminLink::Restore() {
  if (!prior_up_) return Status::Ok();
  NetOf net(host_);
  auto link = ReadLink(*net, ifname_);
  if (!link.ok())
    return link.status().code() == StatusCode::kNotFound ? Status::Ok() : link.status();
  if (!link->admin_up) return Set(true);
  Status s = neighbours_.ReAddMissingPermanent(*net, ifname_);
  return s.ok() ? s : s.Annotate(kind_ + " " + ifname_);
}

Status AdminLink::VerifyRestored() {
  if (auto s = Expect(prior_up_, "as found"); !s.ok()) return s;
  NetOf net(host_);
  Status s = neighbours_.ExpectPermanent(*net, ifname_);
  return s.ok() ? s : s.Annotate(kind_ + " " + ifname_);
}

bool IsDefaultQdisc(const std::string& kind) {
  static const char* kDefaults[] = {"noqueue", "pfifo_fast", "mq", "fq_codel"};
  return std::any_of(std::begin(kDefaults), std::end(kDefaults),
                     [&](const char* k) { return kind == k; });
}

Result<std::string> ReadDefaultRootQdisc(NetStack& net, const std::string& ifname,
                                         const std::string& who, const std::string& advice) {
  auto q = ReadRootQdisc(net, ifname);
  if (!q.ok()) return q.status().Annotate(who);
  if (!IsDefaultQdisc(q->kind)) {
    return FailedPrecondition(
        who + ": root qdisc is " + q->kind + " (handle " + q->handle +
        "), not a kernel default; fdrill will not replace a qdisc it cannot restore" +
        (advice.empty() ? "" : ". " + advice));
  }
  return q->kind;
}

Status DeleteOwnRootQdisc(NetStack& net, const std::string& ifname, const std::string& handle,
                          const std::string& who) {
  auto q = ReadRootQdisc(net, ifname);
  if (!q.ok()) return q.status().code() == StatusCode::kNotFound ? Status::Ok() : q.status();
  if (q->handle != handle) return Status::Ok();  // never applied, or already reverted
  Status s = net.Apply(NetChange::DeleteRootQdisc(ifname));
  return s.ok() ? s : s.Annotate(who);
}

Status ExpectPriorRootQdisc(NetStack& net, const std::string& ifname, const std::string& handle,
                            const std::string& prior_kind, const std::string& who) {
  auto q = ReadRootQdisc(net, ifname);
  if (!q.ok()) return q.status();
  if (q->handle == handle || (!prior_kind.empty() && q->kind != prior_kind)) {
    return FailedPrecondition(who + ": root qdisc is " + q->kind + " " + q->handle +
                              ", expected the prior " + prior_kind);
  }
  return Status::Ok();
}

}  // namespace fdrill
