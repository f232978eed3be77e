#include "harness/controller/lease_limits.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "injectors/injector.h"

namespace fdrill {

Json LeaseLimitsFor(const Scenario& scenario, const std::string& name) {
  std::set<std::string> kinds, targets;
  bool targets_known = true;
  int count = 0;
  Duration longest{};
  for (const PhaseSpec& phase : scenario.phases) {
    for (const FaultSpec& f : phase.faults) {
      if (f.node != name) continue;
      ++count;
      kinds.insert(f.kind);
      longest = std::max(longest, f.max_duration);
      // Host{}: the factories parse params only; nothing is touched.
      auto fault = MakeFault(f.kind, f.params, Host{});
      if (fault.ok()) {
        targets.insert((*fault)->Target());
      } else {
        targets_known = false;
      }
    }
  }
  Json j = {{"kinds", kinds}, {"max_faults", count}};
  if (targets_known) j["targets"] = targets;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(longest).count();
  if (ms > 0) j["max_duration_ms"] = ms;
  return j;
}

}  // namespace fdrill
