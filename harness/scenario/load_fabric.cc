// fabric:, topology: and targets: — which nodes the drill has and how they
// are named, so that every later section can select among them.
#include <set>
#include <string>
#include <tuple>

#include "common/core/units.h"
#include "fabric/fabric_topology.h"
#include "harness/scenario/hostlist.h"
#include "harness/scenario/load_sections.h"
#include "harness/scenario/selector.h"

namespace fdrill {

namespace {

Status LoadHostsFile(const YamlReader& y, const YAML::Node& at, Scenario* s) {
  auto path = y.Str(at, "fabric.hosts");
  if (!path.ok()) return path.status();
  const std::string p = y.Resolve(*path);
  auto hosts = ReadHostsFile(p);
  // Named from the scenario's place, then the hosts file's own ("FILE:LINE: ...").
  if (!hosts.ok()) {
    return y.Error(at, hosts.status().message() +
                           (hosts.status().code() == StatusCode::kNotFound
                                ? " (a relative path starts at the scenario's directory)"
                                : ""));
  }
  if (hosts->size() < 2) return y.Error(at, "the hosts file " + p + " names fewer than 2 hosts");
  s->host_names = std::move(*hosts);
  s->hosts_file = p;
  return Status::Ok();
}

// fabric: {slurm: true}: the allocation this runs in. The loader reads
// SLURM_JOB_NODELIST (set by salloc/sbatch for the job's nodes) so validate
// and plan show the very nodes run will touch.
Status LoadSlurm(const YamlReader& y, const YAML::Node& at, Scenario* s) {
  auto on = y.Bool(at, "fabric.slurm");
  if (!on.ok()) return on.status();
  if (!*on)
    return y.Error(
        at,
        "fabric.slurm: false is no fabric; use slurm: true, hosts: FILE or emulated: {nodes: N}");
  std::string list;
  auto hosts = SlurmJobNodes(&list);
  if (!hosts.ok() && hosts.status().code() == StatusCode::kNotFound) {
    return y.Error(
        at,
        "fabric.slurm: SLURM_JOB_NODELIST is not set: run inside an allocation (salloc -N 4, or an "
        "sbatch script), or set it to check the drill outside one (SLURM_JOB_NODELIST='gpu[01-04]' "
        "fdrill validate FILE)");
  }
  if (!hosts.ok()) return y.Error(at, hosts.status().message());
  if (hosts->size() < 2)
    return y.Error(at, "the Slurm allocation " + list + " has fewer than 2 nodes");
  s->host_names = std::move(*hosts);
  s->slurm = true;
  s->slurm_nodelist = list;
  return Status::Ok();
}

}  // namespace

Status LoadFabric(const YamlReader& y, const YAML::Node& n, Scenario* s) {
  if (auto st = y.CheckKeys(n, "fabric", {"emulated", "hosts", "slurm", "agent_port"}); !st.ok())
    return st;
  const int kinds = (n["emulated"] ? 1 : 0) + (n["hosts"] ? 1 : 0) + (n["slurm"] ? 1 : 0);
  if (kinds > 1)
    return y.Error(n, "fabric is one of emulated: {nodes: N}, hosts: FILE or slurm: true");
  if (n["hosts"] || n["slurm"]) {
    if (auto st = n["hosts"] ? LoadHostsFile(y, n["hosts"], s) : LoadSlurm(y, n["slurm"], s);
        !st.ok())
      return st;
    s->nodes = static_cast<int>(s->host_names.size());
    if (n["agent_port"]) {
      auto port = y.Int(n["agent_port"], "fabric.agent_port", 1, 65535);
      if (!port.ok()) return port.status();
      s->agent_port = static_cast<int>(*port);
    }
    return Status::Ok();
  }
  if (n["agent_port"])
    return y.Error(
        n["agent_port"],
        "fabric.agent_port is for hosts and slurm fabrics; the emulated fabric places its agents");
  const YAML::Node em = n["emulated"];
  if (!em) return y.Error(n, "fabric needs emulated: {nodes: N}, hosts: FILE or slurm: true");
  if (auto st = y.CheckKeys(em, "fabric.emulated",
                            {"nodes", "rails", "leaves", "oversubscription", "port_rate"});
      !st.ok())
    return st;
  if (!em["nodes"]) return y.Error(em, "fabric.emulated needs nodes");
  auto nodes = y.Int(em["nodes"], "fabric.emulated.nodes", 2, kMaxFabricNodes);
  if (!nodes.ok()) return nodes.status();
  s->nodes = static_cast<int>(*nodes);
  FabricShape& shape = s->emulated;
  shape.nodes = s->nodes;
  for (auto [key, out, hi] : {std::tuple{"rails", &shape.rails, kMaxFabricRails},
                              std::tuple{"leaves", &shape.leaves, kMaxFabricLeaves}}) {
    if (!em[key]) continue;
    auto v = y.Int(em[key], std::string("fabric.emulated.") + key, 1, hi);
    if (!v.ok()) return v.status();
    *out = static_cast<int>(*v);
  }
  if (em["oversubscription"]) {
    auto k = y.Number(em["oversubscription"], "fabric.emulated.oversubscription");
    if (!k.ok()) return k.status();
    shape.oversubscription = *k;
  }
  if (em["port_rate"]) {
    auto text = y.Str(em["port_rate"], "fabric.emulated.port_rate");
    if (!text.ok()) return text.status();
    auto rate = ParseRateBitsPerSec(*text);
    if (!rate.ok())
      return y.Error(em["port_rate"], "fabric.emulated.port_rate: " + rate.status().message());
    shape.port_rate_bps = *rate;
  }
  if (Status st = CheckShape(shape, ShapeNames::Scenario()); !st.ok())
    return y.Error(em, st.message());
  return Status::Ok();
}

namespace {

// Keys a target (or a fault) may use to select nodes; every other key of a
// target is an injector param.
const std::set<std::string> kSelectorKeys = {"nodes", "random"};

// nodes: hostlist or list, random: {count|percent, seed}; in a target, any
// other key is an injector param (the fault's kind decides whether it fits).
Result<Target> LoadSelection(const YamlReader& y, const YAML::Node& n, const Scenario& s,
                             const std::string& what) {
  Target t;
  if (!n.IsMap())
    return y.Error(n,
                   what + " must be a mapping like {nodes: n[1-2], random: {count: 1, seed: 7}}");
  if (!n["nodes"])
    return y.Error(n, what + " needs nodes (a name, a hostlist like n[1-3], or a list)");
  auto exprs = y.StrList(n["nodes"], what + ".nodes");
  if (!exprs.ok()) return exprs.status();
  auto nodes = SelectNodes(*exprs, s.NodeNames());
  if (!nodes.ok()) return y.Error(n["nodes"], what + ".nodes: " + nodes.status().message());
  t.nodes = *nodes;
  if (n["random"]) {
    const YAML::Node r = n["random"];
    if (auto st = y.CheckKeys(r, what + ".random", {"count", "percent", "seed"}); !st.ok())
      return st;
    if (!r["seed"]) {
      return y.Error(r, what +
                            ".random needs a seed (any integer): the same seed picks the same "
                            "nodes in plan and run");
    }
    if (static_cast<bool>(r["count"]) == static_cast<bool>(r["percent"])) {
      return y.Error(r, what + ".random needs exactly one of count and percent");
    }
    RandomPick pick;
    auto seed = y.Int(r["seed"], what + ".random.seed", 0, INT64_MAX);
    if (!seed.ok()) return seed.status();
    pick.seed = static_cast<uint64_t>(*seed);
    if (r["count"]) {
      auto c = y.Int(r["count"], what + ".random.count", 1, 100000);
      if (!c.ok()) return c.status();
      pick.count = static_cast<int>(*c);
    } else {
      auto p = y.Number(r["percent"], what + ".random.percent");
      if (!p.ok()) return p.status();
      pick.percent = *p;
    }
    auto picked = PickRandom(t.nodes, pick);
    if (!picked.ok()) return y.Error(r, what + ".random: " + picked.status().message());
    t.nodes = *picked;
  }
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    if (!kSelectorKeys.count(key)) t.params[key] = y.ToJson(kv.second);
  }
  return t;
}

}  // namespace

Status LoadTargets(const YamlReader& y, const YAML::Node& n, const Scenario& s, Targets* out) {
  if (!n.IsMap()) return y.Error(n, "targets must be a mapping of names to selections");
  for (const auto& kv : n) {
    auto name = y.Str(kv.first, "target name");
    if (!name.ok()) return name.status();
    auto t = LoadSelection(y, kv.second, s, "target " + *name);
    if (!t.ok()) return t.status();
    (*out)[*name] = std::move(*t);
  }
  return Status::Ok();
}

// topology: FILE, relative to the scenario's directory like fabric.hosts;
// `emulated`: the map of the emulated fabric the drill declares.
Status LoadTopologyKey(const YamlReader& y, const YAML::Node& n, Scenario* s) {
  auto path = y.Str(n, "topology");
  if (!path.ok()) return path.status();
  if (*path == "emulated") {
    if (!s->Emulated()) {
      return y.Error(n, "topology: emulated is the emulated fabric's map; this drill runs on the " +
                            s->FabricName() + ": name its topology FILE");
    }
    auto topology = ParseTopology(TopologyYaml(s->emulated),
                                  "the emulated fabric's map (" + s->emulated.Describe() + ")");
    if (!topology.ok()) return y.Error(n, "topology: " + topology.status().message());
    s->topology = std::move(*topology);
    return Status::Ok();
  }
  auto topology = LoadTopology(y.Resolve(*path));
  // Named from the scenario's place, then the topology file's.
  if (!topology.ok()) return y.Error(n, "topology: " + topology.status().message());
  s->topology = std::move(*topology);
  return Status::Ok();
}

}  // namespace fdrill
