#include "injectors/netdev.h"

#include <algorithm>

namespace fdrill {

namespace {
constexpr auto kTimeout = std::chrono::seconds(5);

Result<Json> RunJson(ProcessRunner& runner, const std::vector<std::string>& argv) {
  auto r = runner.Run(argv, kTimeout);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    std::string err = r->err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return FailedPrecondition("`" + JoinArgv(argv) + "` exited " + std::to_string(r->exit_code) +
                              ": " + err);
  }
  Json j = Json::parse(r->out, nullptr, false);
  if (j.is_discarded() || !j.is_array())
    return Internal("`" + JoinArgv(argv) + "` printed no JSON array");
  return j;
}

LinkState FromJson(const Json& link) {
  LinkState s;
  s.name = link.value("ifname", "");
  s.operstate = link.value("operstate", "UNKNOWN");
  s.master = link.value("master", "");
  for (const auto& f : link.value("flags", Json::array())) {
    if (f == "UP") s.admin_up = true;
  }
  return s;
}
}  // namespace

Result<std::vector<LinkState>> ListLinks(ProcessRunner& runner) {
  auto j = RunJson(runner, {"ip", "-j", "link", "show"});
  if (!j.ok()) return j.status();
  std::vector<LinkState> out;
  for (const auto& link : *j) out.push_back(FromJson(link));
  return out;
}

Result<LinkState> ReadLink(ProcessRunner& runner, const std::string& ifname) {
  auto all = ListLinks(runner);
  if (!all.ok()) return all.status();
  std::string names;
  for (const auto& l : *all) {
    if (l.name == ifname) return l;
    names += (names.empty() ? "" : ", ") + l.name;
  }
  return NotFound("no interface \"" + ifname + "\" here (interfaces: " + names + ")");
}

Status ProbeInterface(ProcessRunner& runner, const Json& params, const std::string& who) {
  if (!params.is_object() || !params.contains("interface") || !params["interface"].is_string())
    return Status::Ok();
  auto link = ReadLink(runner, params["interface"].get<std::string>());
  return link.ok() ? Status::Ok() : link.status().Annotate(who);
}

Result<std::vector<Qdisc>> ReadQdiscs(ProcessRunner& runner, const std::string& ifname) {
  auto j = RunJson(runner, {"tc", "-j", "qdisc", "show", "dev", ifname});
  if (!j.ok()) {
    if (j.status().message().find("Cannot find device") != std::string::npos) {
      return NotFound("no interface \"" + ifname + "\" here");
    }
    return j.status();
  }
  std::vector<Qdisc> out;
  for (const auto& q : *j) {
    Qdisc d;
    d.kind = q.value("kind", "");
    d.handle = q.value("handle", "");
    d.parent = q.value("root", false) ? "" : q.value("parent", "");
    d.options = q.value("options", Json::object());
    out.push_back(std::move(d));
  }
  return out;
}

Result<RootQdisc> ReadRootQdisc(ProcessRunner& runner, const std::string& ifname) {
  auto j = RunJson(runner, {"tc", "-j", "qdisc", "show", "dev", ifname, "root"});
  if (!j.ok()) {
    if (j.status().message().find("Cannot find device") != std::string::npos) {
      return NotFound("no interface \"" + ifname + "\" here");
    }
    return j.status();
  }
  for (const auto& q : *j) {
    if (!q.value("root", false)) continue;
    RootQdisc r;
    r.kind = q.value("kind", "");
    r.handle = q.value("handle", "");
    r.options = q.value("options", Json::object());
    return r;
  }
  return Internal("tc shows no root qdisc on " + ifname);
}

Status AdminLink::Capture() {
  auto link = ReadLink(*runner_, ifname_);
  if (!link.ok()) return link.status().Annotate(kind_);
  if (!link->admin_up)
    return FailedPrecondition(kind_ + " " + ifname_ +
                              ": the link is already administratively down");
  prior_up_ = true;
  return Status::Ok();
}

std::vector<std::string> AdminLink::Argv(bool up) const {
  return {"ip", "link", "set", "dev", ifname_, up ? "up" : "down"};
}

Status AdminLink::Set(bool up) {
  auto r = RunChecked(*runner_, Argv(up));
  return r.ok() ? Status::Ok() : r.status().Annotate(kind_ + " " + ifname_);
}

Status AdminLink::Expect(bool up, const std::string& why) {
  auto link = ReadLink(*runner_, ifname_);
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
  auto link = ReadLink(*runner_, ifname_);
  if (!link.ok())
    return link.status().code() == StatusCode::kNotFound ? Status::Ok() : link.status();
  return link->admin_up ? Status::Ok() : Set(true);
}

bool IsDefaultQdisc(const std::string& kind) {
  static const char* kDefaults[] = {"noqueue", "pfifo_fast", "mq", "fq_codel"};
  return std::any_of(std::begin(kDefaults), std::end(kDefaults),
                     [&](const char* k) { return kind == k; });
}

Result<std::string> ReadDefaultRootQdisc(ProcessRunner& runner, const std::string& ifname,
                                         const std::string& who, const std::string& advice) {
  auto q = ReadRootQdisc(runner, ifname);
  if (!q.ok()) return q.status().Annotate(who);
  if (!IsDefaultQdisc(q->kind)) {
    return FailedPrecondition(
        who + ": root qdisc is " + q->kind + " (handle " + q->handle +
        "), not a kernel default; fdrill will not replace a qdisc it cannot restore" +
        (advice.empty() ? "" : ". " + advice));
  }
  return q->kind;
}

std::vector<std::string> DeleteRootQdiscArgv(const std::string& ifname) {
  return {"tc", "qdisc", "del", "dev", ifname, "root"};
}

Status DeleteOwnRootQdisc(ProcessRunner& runner, const std::string& ifname,
                          const std::string& handle, const std::string& who) {
  auto q = ReadRootQdisc(runner, ifname);
  if (!q.ok()) return q.status().code() == StatusCode::kNotFound ? Status::Ok() : q.status();
  if (q->handle != handle) return Status::Ok();  // never applied, or already reverted
  auto r = RunChecked(runner, DeleteRootQdiscArgv(ifname));
  return r.ok() ? Status::Ok() : r.status().Annotate(who);
}

Status ExpectPriorRootQdisc(ProcessRunner& runner, const std::string& ifname,
                            const std::string& handle, const std::string& prior_kind,
                            const std::string& who) {
  auto q = ReadRootQdisc(runner, ifname);
  if (!q.ok()) return q.status();
  if (q->handle == handle || (!prior_kind.empty() && q->kind != prior_kind)) {
    return FailedPrecondition(who + ": root qdisc is " + q->kind + " " + q->handle +
                              ", expected the prior " + prior_kind);
  }
  return Status::Ok();
}

}  // namespace fdrill
