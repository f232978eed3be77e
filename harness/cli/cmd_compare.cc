// fdrill compare A B: did B (a run or a campaign) regress against A? The
// statistics are in reports/compare.h; this file reads the flags, prints the
// Markdown table to stdout, writes --json, --html and --junit FILEs, and sets
// the exit code: 1 when a metric regressed, 0 when none did and some metric
// was decided, 2 when nothing could be decided (not enough runs) or a
// directory (or a flag) could not be used.
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
  std::string time_threshold = "25%";
  std::string run_spread;
  std::string json_path;
  std::string html_path;
  std::string junit_path;
};

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) std::fprintf(stderr, "fdrill compare: cannot write %s\n", path.c_str());
  return static_cast<bool>(out);
}

int Compare(const CompareConfig& config) {
  Result<double> threshold = ParseThreshold(config.threshold);
  if (!threshold.ok()) {
    std::fprintf(stderr, "fdrill compare: --threshold: %s\n", threshold.status().message().c_str());
    return 2;
  }
  Result<double> time_threshold = ParseThreshold(config.time_threshold);
  if (!time_threshold.ok()) {
    std::fprintf(stderr, "fdrill compare: --time-threshold: %s\n",
                 time_threshold.status().message().c_str());
    return 2;
  }
  CompareOptions options;
  options.threshold = *threshold;
  options.time_threshold = *time_threshold;
  if (!config.run_spread.empty()) {
    Result<double> spread = ParseThreshold(config.run_spread);
    if (!spread.ok() || !(*spread > 0)) {
      std::fprintf(stderr, "fdrill compare: --run-spread: %s\n",
                   spread.ok() ? "must be above 0 (a campaign's spread, e.g. 2%)"
                               : spread.status().message().c_str());
      return 2;
    }
    options.run_spread = *spread;
  }
  Result<Comparison> comparison = CompareRunDirs(config.a_dir, config.b_dir, options);
  if (!comparison.ok()) {
    std::fprintf(stderr, "fdrill compare: %s\n", comparison.status().message().c_str());
    return 2;
  }
  if (!config.json_path.empty() && !WriteFile(config.json_path, RenderCompareJson(*comparison)))
    return 2;
  if (!config.html_path.empty() && !WriteFile(config.html_path, RenderCompareHtml(*comparison)))
    return 2;
  if (!config.junit_path.empty() && !WriteFile(config.junit_path, RenderCompareJunit(*comparison)))
    return 2;
  const std::string markdown = RenderCompareMarkdown(*comparison);
  std::fwrite(markdown.data(), 1, markdown.size(), stdout);
  return ExitCodeForComparison(*comparison);
}

}  // namespace

void AddCompareCommands(CLI::App& app, int* exit_code) {
  auto config = std::make_shared<CompareConfig>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "did B regress against A? busbw and each fault's slowdown, recovery and loss, with "
      "intervals over runs (exit 1 regression, 0 none, 2 cannot decide)");
  cmd->add_option("a", config->a_dir, "run or campaign directory A (the reference)")->required();
  cmd->add_option("b", config->b_dir, "run or campaign directory B (the candidate)")->required();
  cmd->add_option("--threshold", config->threshold,
                  "smallest busbw change that counts, e.g. 3% or 0.03")
      ->capture_default_str();
  cmd->add_option("--time-threshold", config->time_threshold,
                  "smallest change of a fault's slowdown, times, stall or GPU·s lost that counts")
      ->capture_default_str();
  cmd->add_option("--run-spread", config->run_spread,
                  "one run a side: how much runs of this drill differ (sd, e.g. 2%: a campaign's "
                  "`spread` in compare --json); without it one run a side decides nothing");
  cmd->add_option("--json", config->json_path, "also write the comparison as JSON to FILE");
  cmd->add_option("--html", config->html_path, "also write it as one HTML page to FILE");
  cmd->add_option("--junit", config->junit_path,
                  "also write it as JUnit XML to FILE (a regression fails its metric)");
  cmd->callback([config, exit_code] { *exit_code = Compare(*config); });
}

}  // namespace fdrill
