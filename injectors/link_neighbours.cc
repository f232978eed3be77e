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

std::vector<Neighbour> LinkNeighbours::MissingPermanent(const std::vector<Neighbour>& now) const {
  std::vector<Neighbour> out;
  for (const auto& n : entries_) {
    if (n.permanent() && std::find(now.begin(), now.end(), n) == now.end()) out.push_back(n);
  }
  return out;
}

Status LinkNeighbours::ReAddMissingPermanent(NetStack& net, const std::string& ifname) const {
  if (std::none_of(entries_.begin(), entries_.end(),
                   [](const Neighbour& n) { return n.permanent(); }))
    return Status::Ok();
  auto now = net.Neighbours(ifname);
  if (!now.ok()) return now.status().Annotate("neighbours of " + ifname);
  std::string failed;
  for (const auto& n : MissingPermanent(*now)) {
    Status s = net.Apply(ReplaceOf(ifname, n));
    if (!s.ok()) failed += (failed.empty() ? "" : "; ") + s.message();
  }
  if (failed.empty()) return Status::Ok();
  return FailedPrecondition("permanent neighbour not restored: " + failed);
}

Status LinkNeighbours::ExpectPermanent(NetStack& net, const std::string& ifname) const {
  if (std::none_of(entries_.begin(), entries_.end(),
                   [](const Neighbour& n) { return n.permanent(); }))
    return Status::Ok();
  auto now = net.Neighbours(ifname);
  if (!now.ok()) return now.status().Annotate("neighbours of " + ifname);
  std::string missing;
  for (const auto& n : MissingPermanent(*now))
    missing += (missing.empty() ? "" : ", ") + n.dst + " lladdr " + n.lladdr;
  if (missing.empty()) return Status::Ok();
  return FailedPrecondition("permanent neighbour " + missing + " on " + ifname +
                            " is missing (as found, it was there)");
}

}  // namespace fdrill
