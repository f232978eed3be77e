#include "harness/controller/agent_set.h"

#include <atomic>
#include <thread>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>

#include "fabric/fabric_state.h"
#include "harness/scenario/hostlist.h"

namespace fdrill {

std::vector<AgentAddress> AgentsOfFabric(const FabricState& fabric, bool with_switches) {
  std::vector<AgentAddress> out;
  for (const auto& n : fabric.nodes)
    out.push_back({n.name, n.MgmtIp(), static_cast<uint16_t>(n.agent_port)});
  if (with_switches) {
    for (const auto& sw : fabric.switches) {
      if (sw.agent.agent_pid == 0) continue;  // a version-1 fabric: no switch agent
      out.push_back({sw.name, sw.agent.MgmtIp(), static_cast<uint16_t>(sw.agent.agent_port)});
    }
  }
  return out;
}

std::vector<AgentAddress> AgentsOfHosts(const std::vector<std::string>& hosts, uint16_t port) {
  std::vector<AgentAddress> out;
  for (const auto& h : hosts) out.push_back({h, h, port});
  return out;
}

DrillTargets DrillTargetsOfFabric(const FabricState& fabric) {
  DrillTargets out;
  for (const FabricNode& n : fabric.nodes) {
    out.nodes.push_back(
        {n.name, n.MgmtIp(), static_cast<uint16_t>(n.agent_port), n.tmpdir, n.FabricIp(), true});
  }
  for (const FabricSwitch& sw : fabric.switches) {
    const FabricNode& a = sw.agent;
    out.switches.push_back(
        {sw.name, a.MgmtIp(), static_cast<uint16_t>(a.agent_port), a.tmpdir, "", a.agent_pid != 0});
  }
  out.rail_subnets = fabric.RailSubnets();
  out.shape = fabric.shape;
  out.shape.nodes = static_cast<int>(fabric.nodes.size());
  out.pki_dir = fabric.pki_dir;
  if (!fabric.switches.empty()) out.cabling = Json::parse(SwitchesJson(fabric));
  return out;
}

DrillTargets DrillTargetsOfHosts(const std::vector<std::string>& hosts, uint16_t port) {
  DrillTargets out;
  for (const std::string& h : hosts) out.nodes.push_back({h, h, port, "/tmp", "", true});
  return out;
}

Result<std::vector<AgentAddress>> ResolveAgents(const std::string& hosts_file, bool slurm,
                                                uint16_t port, const std::string& fabric_dir,
                                                std::string* fabric_pki, bool with_switches) {
  if (!hosts_file.empty() && slurm)
    return InvalidArgument("--hosts and --slurm exclude each other: give one");
  if (!hosts_file.empty()) {
    auto hosts = ReadHostsFile(hosts_file);
    if (!hosts.ok()) return hosts.status().Annotate("--hosts");
    return AgentsOfHosts(*hosts, port);
  }
  if (slurm) {
    std::string list;
    auto hosts = SlurmJobNodes(&list);
    if (!hosts.ok() && hosts.status().code() == StatusCode::kNotFound) {
      return FailedPrecondition(
          "--slurm: SLURM_JOB_NODELIST is not set; run inside an allocation (salloc, sbatch) or "
          "give --hosts FILE");
    }
    if (!hosts.ok()) return hosts.status().Annotate("--slurm");
    return AgentsOfHosts(*hosts, port);
  }
  auto fabric = LoadFabricState(fabric_dir);
  if (!fabric.ok()) {
    if (fabric.status().code() == StatusCode::kNotFound) {
      return NotFound("no emulated fabric is up (" + fabric_dir +
                      "/fabric.json) and neither --hosts FILE nor --slurm was given");
    }
    return fabric.status();
  }
  *fabric_pki = fabric->pki_dir;
  return AgentsOfFabric(*fabric, with_switches);
}

Json ClusterInventory(const std::vector<std::string>& nodes,
                      const std::vector<Result<Json>>& replies) {
  Json cluster = {{"nodes", Json::array()}};
  for (size_t i = 0; i < nodes.size(); ++i) {
    Json node = replies[i].ok() ? *replies[i] : Json{{"error", replies[i].status().message()}};
    for (const char* wire : {"v", "id", "ok", "type"}) node.erase(wire);  // the reply's envelope
    node["node"] = nodes[i];
    cluster["nodes"].push_back(std::move(node));
  }
  return cluster;
}

std::vector<Result<Json>> ForEachAgent(const std::vector<AgentAddress>& agents,
                                       const TlsConfig* tls, Duration timeout,
                                       const std::function<Result<Json>(AgentLink&)>& job) {
  std::vector<Result<Json>> out(agents.size(), Result<Json>(Internal("not run")));
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < agents.size(); i = next++) {
      const AgentAddress& a = agents[i];
      AgentLink link(io, a.node, a.host, a.port, tls);
      if (auto st = link.Connect(timeout); !st.ok()) {
        out[i] = st;
        continue;
      }
      out[i] = job(link);
      link.Close();
    }
  };
  std::vector<std::thread> workers;
  for (size_t w = 0; w < std::min<size_t>(kParallel, agents.size()); ++w)
    workers.emplace_back(worker);
  for (auto& t : workers) t.join();
  work.reset();
  io.stop();
  io_thread.join();
  return out;
}

}  // namespace fdrill
