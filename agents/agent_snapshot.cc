// AgentService's snapshot request: the node's state a drill compares before
// and after (docs/reference/protocol.md "snapshot"), so the controller can say whether
// the fabric was left as found.
#include <filesystem>
#include <sstream>

#include "agents/agent_service.h"
#include "common/core/json.h"
#include "common/wire/protocol.h"
#include "injectors/burn_process.h"
#include "injectors/netdev.h"
#include "injectors/ranks.h"

namespace fdrill {

// What faults beyond links and qdiscs could leave behind: fdrill's iptables
// rules, stopped workload ranks of this node, fdrill-burn processes and
// cgroups.
Json AgentService::HostSnapshot() {
  Json host = {{proto::key::kStoppedRanks, 0},
               {proto::key::kBurners, 0},
               {proto::key::kBurnCgroups, Json::array()},
               {proto::key::kFdrillRules, Json::array()}};
  if (host_.procs == nullptr) return host;
  const std::string own_ns = host_.procs->OwnNetNs();
  int stopped = 0, burners = 0;
  if (auto pids = host_.procs->Pids(); pids.ok()) {
    for (int pid : *pids) {
      auto info = host_.procs->Inspect(pid);
      if (!info.ok() || info->net_ns != own_ns) continue;
      if (IsWorkloadRank(*info) && info->state == 'T') ++stopped;
      if (info->exe_name == kBurnExe && info->state != 'Z') ++burners;
    }
  }
  // fdrill's iptables rules and chains (link_loss, link_partition,
  // link_delay): every iptables-save line that names an FDRILL- chain; and
  // every nft table named fdrill_*.
  Json rules = Json::array();
  if (host_.runner != nullptr) {
    if (auto saved = RunChecked(*host_.runner, {"iptables-save"}); saved.ok()) {
      std::istringstream lines(*saved);
      for (std::string line; std::getline(lines, line);) {
        if (line.find("FDRILL-") != std::string::npos) rules.push_back(line);
      }
    }
    // ... and fdrill's nft tables (port_loss's `bridge fdrill_loss_<port>`, link_loss's
    // `netdev fdrill_loss_<hash>`; its veth fdrill<hash> is in the links above).
    if (auto tables = RunChecked(*host_.runner, {"nft", "list", "tables"}); tables.ok()) {
      std::istringstream lines(*tables);
      for (std::string line; std::getline(lines, line);) {
        if (line.find(" fdrill_") != std::string::npos) rules.push_back(line);
      }
    }
  }
  host[proto::key::kFdrillRules] = rules;
  host[proto::key::kStoppedRanks] = stopped;
  host[proto::key::kBurners] = burners;
  if (host_.sysfs != nullptr) {
    if (auto info = host_.sysfs->Read("/proc/self/mountinfo"); info.ok()) {
      std::string mount = CgroupV2Mount(*info);
      std::error_code ec;
      // This node's own: another node's (or another fabric's) on the same
      // machine share the tree.
      const std::string own = BurnCgroupPrefix(*host_.procs);
      if (!mount.empty()) {
        for (const auto& e : std::filesystem::directory_iterator(mount, ec)) {
          std::string name = e.path().filename().string();
          if (name.rfind(own, 0) == 0) host[proto::key::kBurnCgroups].push_back(name);
        }
      }
    }
  }
  return host;
}

Result<Json> AgentService::Snapshot() {
  NetOf net(host_);
  auto links = ListLinks(*net);
  if (!links.ok()) return links.status();
  Json out = Json::array();
  for (const auto& l : *links) {
    auto tree = ReadQdiscs(*net, l.name);
    if (!tree.ok()) return tree.status();
    Json root = {{"kind", ""}, {"handle", ""}};
    Json lines = Json::array();
    for (const auto& q : *tree) {
      if (q.parent.empty()) root = {{"kind", q.kind}, {"handle", q.handle}};
      lines.push_back(q.kind + " " + q.handle +
                      (q.parent.empty() ? " root " : " parent " + q.parent + " ") +
                      DumpJson(q.options));
    }
    out.push_back({{proto::key::kName, l.name},
                   {proto::key::kAdminUp, l.admin_up},
                   {proto::key::kQdisc, root["kind"]},
                   {proto::key::kQdiscHandle, root["handle"]},
                   {proto::key::kQdiscTree, lines}});
  }
  return Json{{proto::key::kLinks, out}, {proto::key::kHost, HostSnapshot()}};
}

}  // namespace fdrill
