#include "agents/tcp_link_retrans.h"

#include <set>
#include <unordered_map>

namespace fdrill {

void TcpLinkRetrans::Sample(const std::string& mgmt_interface, Json& out) {
  auto addresses = sockets_.Addresses();
  if (!addresses.ok()) return;
  std::unordered_map<std::string, std::string> interface_of;  // local address -> interface
  std::set<std::string> links;
  for (const InterfaceAddress& a : *addresses) {
    if (a.interface == "lo" || a.interface == mgmt_interface) continue;
    interface_of.emplace(a.address, a.interface);
    links.insert(a.interface);
  }
  // Read before the list: what moves after it is seen by the next sample.
  auto activity = sockets_.Activity();
  if (!activity.ok() || listed_at_ != *activity) {
    if (!List(interface_of)) return;
    listed_at_ = activity.ok() ? std::optional<TcpActivity>(*activity) : std::nullopt;
  }
  for (const std::string& link : links) out[link + ".tcp_retrans_segs"] = totals_[link];
}

bool TcpLinkRetrans::List(const std::unordered_map<std::string, std::string>& interface_of) {
  auto sockets = sockets_.List();
  if (!sockets.ok()) return false;
  std::map<uint64_t, uint64_t> seen;
  for (const TcpSocket& s : *sockets) {
    seen[s.cookie] = s.total_retrans;
    auto link = interface_of.find(s.local);
    if (link == interface_of.end()) continue;
    auto before = last_.find(s.cookie);
    const uint64_t was = before == last_.end() ? 0 : before->second;
    // A count below the last one is another socket under a reused cookie:
    // all of its count is new.
    totals_[link->second] += s.total_retrans >= was ? s.total_retrans - was : s.total_retrans;
  }
  last_ = std::move(seen);
  return true;
}

}  // namespace fdrill
