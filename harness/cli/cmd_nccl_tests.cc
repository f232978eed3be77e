// fdrill nccl-tests FILE: reads a saved nccl-tests output — the text table
// (stdout of any version, a launcher's prefixes and NCCL's log lines
// included) or the JSON document of -J/--output_file — and writes one
// fdrill metrics record per row and placement (docs/reference/formats.md) as JSON
// lines, so logs from before fdrill (or from a run fdrill did not drive)
// read like a drill's metrics.jsonl. A line it cannot read is reported with
// its number; nccl-tests' own failure lines make the exit code 1.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/core/json.h"
#include "harness/cli/commands.h"
#include "workloads/nccl_tests_output.h"

namespace fdrill {

namespace {

int ConvertNcclTests(const std::string& file, const std::string& out_path, const std::string& op) {
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "fdrill: nccl-tests %s: cannot open it\n", file.c_str());
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<NcclTestsRow> rows;
  std::vector<std::string> problems, failures;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    auto parsed = ParseNcclTestsJson(text, file);
    if (!parsed.ok()) {
      std::fprintf(stderr, "fdrill: %s\n", parsed.status().message().c_str());
      return 2;
    }
    rows = std::move(*parsed);
  } else {
    // The op: --op, else a *_perf file name, else what the output says.
    NcclTestsParser parser(op.empty() ? file : op + "_perf");
    rows = parser.Feed(text);
    for (auto& r : parser.Finish()) rows.push_back(std::move(r));
    for (const auto& e : parser.errors) problems.push_back(file + ": " + e);
    for (const auto& f : parser.failures) failures.push_back(file + ": " + f);
  }
  std::FILE* out = out_path.empty() || out_path == "-" ? stdout : std::fopen(out_path.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "fdrill: --out %s: cannot create it\n", out_path.c_str());
    return 2;
  }
  int64_t iter = 0;
  for (const auto& row : rows) {
    // Both placements where nccl-tests measured both: out-of-place first.
    if (row.has_oop)
      std::fprintf(out, "%s\n", DumpJson(ToMetricsRecord(row, iter, 0, false)).c_str());
    if (row.has_ip)
      std::fprintf(out, "%s\n", DumpJson(ToMetricsRecord(row, iter, 0, true)).c_str());
    ++iter;
  }
  if (out != stdout) std::fclose(out);
  for (const auto& p : problems) std::fprintf(stderr, "fdrill: %s\n", p.c_str());
  for (const auto& f : failures) std::fprintf(stderr, "fdrill: nccl-tests failed: %s\n", f.c_str());
  std::fprintf(stderr, "fdrill: %zu rows from %s\n", rows.size(), file.c_str());
  if (!failures.empty()) return 1;
  return rows.empty() ? 2 : 0;
}

}  // namespace

void AddNcclTestsCommands(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "nccl-tests",
      "turn a saved nccl-tests output (text or -J JSON) into fdrill metrics records (JSON lines)");
  static std::string file, out, op;
  cmd->add_option("file", file, "nccl-tests' stdout, or the file its -J/--output_file wrote")
      ->required();
  cmd->add_option("--out", out, "where the JSON lines go (default: stdout)");
  cmd->add_option("--op", op,
                  "the collective (all_reduce, alltoall, ...) when the output does not say and the "
                  "file is not named <op>_perf...");
  cmd->callback([exit_code] { *exit_code = ConvertNcclTests(file, out, op); });
}

}  // namespace fdrill
