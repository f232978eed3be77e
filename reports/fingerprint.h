// What a run was tested on, node by node, as one flat table — the kernel,
// drivers, HCA firmware, MTUs, transport sysctls and fdrill version each
// agent reported in inventory.json (agents/software.h, agents/inventory.h)
// — and what differs between two runs, which `fdrill compare` prints before
// any number: a verdict is about a change only when the change is known.
//
// Keys: "kernel", "fdrill", "module <name>", "sysctl <name>",
// "hca <dev> fw_ver", "netdev <if> mtu", "nvml" from the inventory; and
// from the job's own output (workload.log), what its ranks loaded:
// "workload mpi", "workload nccl", "workload cudart" ("workload <tenant>
// mpi" for a tenant's). A node whose inventory failed has no inventory
// keys; a key a node lacks is "(none)" for it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/core/result.h"

namespace fdrill {

// key -> value -> the nodes with that value (in inventory order).
using Fingerprint = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

// From inventory.json's text; an empty fingerprint when it has no nodes.
Result<Fingerprint> ParseFingerprint(std::string_view inventory_json);
// The same from the parsed object (LoadRunDir parses the file once).
Fingerprint FingerprintOf(const nlohmann::json& inventory);

// Adds the libraries a workload's ranks loaded, from its log text: the last
// run of "# loaded KEY on HOSTS: VALUE" lines fdrill-collective prints
// (workloads/libraries.h), as "workload[ TENANT] KEY". A log without them
// (another workload, or a job that died before its end) adds nothing.
void AddLoadedLibraries(std::string_view log, std::string_view tenant, Fingerprint* fingerprint);

struct FingerprintDifference {
  std::string key;
  std::string a;  // "cubic on n0, n1, n2, n3", "5.0 on n0; 5.1 on n1"
  std::string b;
};

// Every key whose values (or the nodes holding them) differ; in key order.
std::vector<FingerprintDifference> DiffFingerprints(const Fingerprint& a, const Fingerprint& b);

}  // namespace fdrill
