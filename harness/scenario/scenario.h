// A drill scenario as loaded and validated: everything `fdrill run` needs,
// with every unit parsed and every fault's params checked by its injector's
// parser. Loading touches nothing on any machine.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/core/units.h"
#include "harness/wire/wire.h"

namespace fdrill {

struct FaultSpec {
  std::string id;      // unique in the scenario; "<phase>-<kind>" when not given
  std::string kind;    // injector name
  std::string node;    // "n1"
  Json params;         // validated by the injector's parser
  int line = 0;        // 1-based line in the scenario file, for messages
  // The agent reverts the fault by itself once it has been on this long,
  // whatever the controller does. Default: its phase plus the lease TTL.
  Duration max_duration{};
};

struct PhaseSpec {
  std::string name;
  Duration duration{};
  std::vector<FaultSpec> faults;  // applied at phase start, reverted at its end
};

struct WorkloadSpec {
  std::string op = "all_reduce";
  std::string dtype = "float32";
  uint64_t size_bytes = 4u << 20;
  int ranks_per_node = 1;
  std::string backend = "mpi";
  int warmup = 5;
};

struct ExpectSpec {
  std::optional<double> max_slowdown;
  std::optional<double> max_time_to_recover_s;
  bool no_residue = true;
  bool data_intact = true;
};

struct Scenario {
  std::string file;
  std::string text;  // the file as read, written to the run directory as run
  std::string name;
  int nodes = 0;     // emulated fabric size the drill needs
  WorkloadSpec workload;
  std::vector<PhaseSpec> phases;
  Duration lease_ttl = std::chrono::seconds(5);
  Duration lease_renew = std::chrono::seconds(1);
  int max_faulted_nodes = 1;  // blast radius: nodes with a fault in force at once
  int recovery_window_iters = 5;
  ExpectSpec expect;

  Duration TotalDuration() const;
  std::vector<std::string> NodeNames() const;  // n0..n{nodes-1}
};

// Reads and validates FILE. Errors read "FILE:LINE:COL: what; hint".
Result<Scenario> LoadScenario(const std::string& path);
Result<Scenario> ParseScenario(const std::string& text, const std::string& file_name);

}  // namespace fdrill
