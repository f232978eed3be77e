// libFuzzer target: the scenario loader (harness/scenario) on arbitrary
// text. Beyond "no crash, no sanitizer report, no uncaught exception" it
// checks the contract operators rely on: every refusal names the file
// ("fuzz.yaml: ..." or "fuzz.yaml:LINE:COL: ..."), and an accepted scenario
// has nodes, at least one phase and a positive duration.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "harness/scenario/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto scenario = fdrill::ParseScenario(text, "fuzz.yaml");
  if (!scenario.ok()) {
    if (scenario.status().message().rfind("fuzz.yaml", 0) != 0) std::abort();
    return 0;
  }
  if (scenario->nodes <= 0 || scenario->phases.empty() || scenario->TotalDuration().count() <= 0)
    std::abort();
  return 0;
}
