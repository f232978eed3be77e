// fdrill compare A B: did run B regress against run A? The statistics are in
// reports/compare.h; this file reads the flags, prints the Markdown table to
// stdout, writes --json FILE, and sets the exit code: 1 when any (op, size,
// phase) regressed, 0 when none did, 2 when a run directory (or the flags)
// could not be used.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "harness/cli/commands.h"
#include "reports/compare.h"

namespace fdrill {

namespace {

struct CompareConfig {
  std::string a_dir;
  std::string b_dir;
  std::string threshold = "3%";
  std::string json_path;
};

int Compare(const CompareConfig& config) {
  Result<double> threshold = ParseThreshold(config.threshold);
  if (!threshold.ok()) {
    std::fprintf(stderr, "fdrill compare: %s\n", threshold.status().message().c_str());
    return 2;
  }
  CompareOptions options;
  options.threshold = *threshold;
  Result<Comparison> comparison = CompareRunDirs(config.a_dir, config.b_dir, options);
  if (!comparison.ok()) {
    std::fprintf(stderr, "fdrill compare: %s\n", comparison.status().message().c_str());
    return 2;
  }
  if (!config.json_path.empty()) {
    std::ofstream out(config.json_path, std::ios::binary | std::ios::trunc);
    out << RenderCompareJson(*comparison);
    out.close();
    if (!out) {
      std::fprintf(stderr, "fdrill compare: cannot write %s\n", config.json_path.c_str());
      return 2;
    }
  }
  const std::string markdown = RenderCompareMarkdown(*comparison);
  std::fwrite(markdown.data(), 1, markdown.size(), stdout);
  return ExitCodeForComparison(*comparison);
}

}  // namespace

void AddCompareCommands(CLI::App& app, int* exit_code) {
  auto config = std::make_shared<CompareConfig>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "per op, size and phase: did run B's busbw regress against run A's? (exit 1 if so)");
  cmd->add_option("a", config->a_dir, "run directory A (the reference)")->required();
  cmd->add_option("b", config->b_dir, "run directory B (the candidate)")->required();
  cmd->add_option("--threshold", config->threshold, "smallest change that counts, e.g. 3% or 0.03")
      ->capture_default_str();
  cmd->add_option("--json", config->json_path, "also write the comparison as JSON to FILE");
  cmd->callback([config, exit_code] { *exit_code = Compare(*config); });
}

}  // namespace fdrill
