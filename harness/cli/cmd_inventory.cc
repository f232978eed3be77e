// fdrill inventory: what every agent found on its node — GPUs and NVLinks
// (NVML), HCAs and ports (/sys/class/infiniband), netdevs, NUMA — as a
// table, or as JSON ({"nodes": [<agent inventory>, ...]}, docs/reference/formats.md)
// with --json. On the emulated fabric, its switches and what each port is
// cabled to follow ("switches" in the JSON); with --topology FILE, the
// switches a drill with that topology file would read for these nodes
// (harness/scenario/topology_switches.h), so an operator sees fdrill's
// reading of the fabric before a drill relies on it. A topology file with
// an error stops it before any agent is asked, naming the file's line.
// Reads only; an agent that does not answer is listed with its error and
// makes the exit code 2.
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "common/core/json.h"
#include "fabric/fabric_state.h"
#include "harness/cli/agent_flags.h"
#include "harness/cli/commands.h"
#include "harness/cli/inventory_table.h"
#include "harness/scenario/topology_switches.h"

namespace fdrill {

namespace {

int Inventory(const AgentFlags& flags, const std::string& topology_file, bool json) {
  std::optional<Topology> topology;
  if (!topology_file.empty()) {
    auto loaded = LoadTopology(topology_file);
    if (!loaded.ok()) {
      std::fprintf(stderr, "fdrill: --topology: %s\n", loaded.status().message().c_str());
      return 2;
    }
    topology = std::move(*loaded);
  }
  auto resolved = flags.Resolve();
  if (!resolved.ok()) {
    std::fprintf(stderr, "fdrill: %s\n", resolved.status().message().c_str());
    return 2;
  }
  const TlsConfig* tls = resolved->tls ? &*resolved->tls : nullptr;
  auto results = ForEachAgent(resolved->agents, tls, std::chrono::seconds(5), [](AgentLink& link) {
    return link.Call("inventory", Json::object(), std::chrono::seconds(20));
  });
  std::vector<std::string> names;
  int rc = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    names.push_back(resolved->agents[i].node);
    if (!results[i].ok()) rc = 2;
  }
  Json cluster = ClusterInventory(names, results);
  // The topology file's switches for these nodes, or the emulated fabric's
  // and their cabling, from the fabric's map.
  if (topology) {
    cluster["switches"] = TopologySwitches(*topology, cluster);
  } else if (flags.hosts_file.empty() && !flags.slurm) {
    if (auto fabric = LoadFabricState(flags.fabric_dir); fabric.ok()) {
      cluster["switches"] = Json::parse(SwitchesJson(*fabric));
    }
  }
  if (json) {
    std::printf("%s\n", DumpJson(cluster, 2).c_str());
  } else {
    std::fputs(FormatInventoryTable(cluster).c_str(), stdout);
    if (std::string sw = FormatSwitchTable(cluster); !sw.empty()) std::printf("\n%s", sw.c_str());
  }
  return rc;
}

}  // namespace

void AddInventoryCommands(CLI::App& app, int* exit_code) {
  auto* inv = app.add_subcommand(
      "inventory",
      "list every node's GPUs, NVLinks, HCAs/ports, netdevs and NUMA, as the agents find them");
  static AgentFlags flags;
  static bool json = false;
  static std::string topology;
  flags.Add(inv);
  inv->add_flag("--json", json, "print JSON instead of the table");
  inv->add_option("--topology", topology,
                  "a topology file (scenarios/README.md): list its leaves and spines with the "
                  "ports a drill reads for these nodes (each netdev, and the HCA port under it)");
  inv->callback([exit_code] { *exit_code = Inventory(flags, topology, json); });
}

}  // namespace fdrill
