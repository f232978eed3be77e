#include "injectors/link_neighbours.h"

#include <algorithm>

namespace fdrill {

namespace {

NetChange ReplaceOf(const std::string& ifname, const Neighbour& n) {
  return NetChange::NeighReplace(ifname, n.dst, n.lladdr, n.permanent());
}

}  // namespace

Status LinkNeighbours::Capture(NetStack& net, const std::string& ifname) {
  auto now = net.Neighbours(ifname);
  if (!now.ok()) return now.status().Annotate("neighbours of " + ifname);
  entries_ = std::move(*now);
  return Status::Ok();
}

Json LinkNeighbours::Saved() const {
  Json out = Json::array();
  for (const auto& n : entries_)
    out.push_back({{"dst", n.dst}, {"lladdr", n.lladdr}, {"state", n.state}});
  return out;
}

void LinkNeighbours::Load(const Json& saved) {
  entries_.clear();
  if (!saved.is_array()) return;
  for (const Json& e : saved) {
    if (!e.is_object()) continue;
    auto text = [&](const char* key) {
      return e.contains(key) && e[key].is_string() ? e[key].get<std::string>() : std::string();
    };
    Neighbour n{text("dst"), text("lladdr"), text("state")};
    if (!n.dst.empty() && !n.lladdr.empty() && !n.state.empty()) entries_.push_back(std::move(n));
  }
}

Status LinkNeighbours::ReAdd(NetStack& net, const std::string& ifname) const {
  std::string failed;
  for (const auto& n : entries_) {
    Status s = net.Apply(ReplaceOf(ifname, n));
    if (!s.ok() && n.permanent()) failed += (failed.empty() ? "" : "; ") + s.message();
  }
  if (failed.empty()) return Status::Ok();
  return FailedPrecondition("permanent neighbour not restored: " + failed);
}

Result<std::vector<Neighbour>> LinkNeighbours::MissingPermanent(NetStack& net,
                                                                const std::string& ifname) const {
  std::vector<Neighbour> out;
  if (std::none_of(entries_.begin(), entries_.end(),
                   [](const Neighbour& n) { return n.permanent(); }))
    return out;
  auto now = net.Neighbours(ifname);
  if (!now.ok()) return now.status().Annotate("neighbours of " + ifname);
  for (const auto& n : entries_) {
    if (n.permanent() && std::find(now->begin(), now->end(), n) == now->end()) out.push_back(n);
  }
  return out;
}

Status LinkNeighbours::ReAddMissingPermanent(NetStack& net, const std::string& ifname) const {
  auto missing = MissingPermanent(net, ifname);
  if (!missing.ok()) return missing.status();
  std::string failed;
  for (const auto& n : *missing) {
    Status s = net.Apply(ReplaceOf(ifname, n));
    if (!s.ok()) failed += (failed.empty() ? "" : "; ") + s.message();
  }
  if (failed.empty()) return Status::Ok();
  return FailedPrecondition("permanent neighbour not restored: " + failed);
}

Status LinkNeighbours::ExpectPermanent(NetStack& net, const std::string& ifname) const {
  auto lacking = MissingPermanent(net, ifname);
  if (!lacking.ok()) return lacking.status();
  std::string missing;
  for (const auto& n : *lacking)
    missing += (missing.empty() ? "" : ", ") + n.dst + " lladdr " + n.lladdr;
  if (missing.empty()) return Status::Ok();
  return FailedPrecondition("permanent neighbour " + missing + " on " + ifname +
                            " is missing (as found, it was there)");
}

}  // namespace fdrill
