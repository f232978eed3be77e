// Reading NVIDIA nccl-tests (all_reduce_perf, alltoall_perf, ...) output:
// the text table they print on stdout, streamed line by line as a launcher
// writes it, and the JSON file newer versions write with -J/--output_file.
// No MPI, no CUDA: the agent links it to follow a live run, the reports to
// read a saved one.
//
// The text format, as nccl-tests' src/common.cu and src/util.cu print it:
//   # nccl-tests version 2.17.1 nccl-headers=... nccl-library=...   (newer)
//   # Collective test starting: all_reduce_perf                       (newer)
//   # nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) ...
//   #  Rank  0 Group  0 Pid   5068 on   GENOA-06 device  0 [0x21] NVIDIA ...
//   #       size   count   type   redop   root   time algbw busbw #wrong   time algbw busbw #wrong
//          8       2   float     sum     -1   36.47  0.00  0.00      0   34.74  0.00  0.00      0
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 6.6972
// The columns differ by version and op, so a row is read through the column
// header printed before it (never through a fixed layout):
//  - since ~2.11 every op prints "redop root" ("none" / -1 when it has none)
//    and "#wrong" (elements that failed the check; "N/A" without -c);
//  - before, each op printed its own: all_gather/alltoall "type" only (and
//    some builds still print a blank under a "redop" title), broadcast
//    "type root", reduce "type redop root"; and an "error" column holding
//    the largest relative error (e.g. 2e-07, a trailing '*' past the
//    threshold) rather than a count;
//  - "cputime" replaces "time" with -C; -T appends a "timestamp" (two
//    tokens: date and time); times are in microseconds, printed with fewer
//    decimals as they grow (7 characters wide: "127453", "1.2e+07").
// The measurement groups are read from the right of the row and the
// leading columns from the left, so a blank leading column is recognised.
// With -N 0 (run_cycles) the rows of a sweep repeat without a new header;
// each repetition gets the next `cycle` number.
//
// Also understood: Open MPI --tag-output ("[1,0]<stdout>:") and srun
// --label (" 0: ") prefixes, NCCL INFO/WARN log lines (skipped), and
// nccl-tests' failure lines ("host: Test NCCL failure common.cu:392 '...'",
// " .. host pid N: Test failure common.cu:590"), collected in failures.
// Lines inside a table that are not rows, log lines or footers are errors,
// each naming its line number; outside a table unknown lines (launcher
// banners, warnings) are skipped. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/core/result.h"

namespace fdrill {

using Json = nlohmann::json;

// One "#  Rank ..." line: which GPU a rank ran on.
struct NcclTestsDevice {
  int rank = 0;
  std::string host;
  int device = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
};

struct NcclTestsHeader {
  std::string version;  // "2.20.0 (b4d5bee)"; empty before it was printed
  std::string op;       // "all_reduce" (from "Collective test starting" or the binary name)
  int nthreads = 0;
  int ngpus = 0;
  int64_t min_bytes = 0;
  int64_t max_bytes = 0;
  int iters = 0;
  std::optional<int> validation;  // -c: 0 means #wrong reads N/A
  std::vector<NcclTestsDevice> devices;
  std::vector<std::string> columns;      // the last column header's titles
  bool cpu_time = false;                 // "cputime" columns (-C)
  std::optional<int64_t> out_of_bounds;  // "# Out of bounds values : N"
  std::optional<double> avg_busbw_gbps;  // "# Avg bus bandwidth    : X"
};

// One row: one message size, out-of-place then in-place measurements.
struct NcclTestsRow {
  std::string op;  // the header's op, copied so a row stands alone
  int64_t size_bytes = 0;
  int64_t count = 0;
  std::string type;   // nccl-tests' name: float, half, bfloat16, int32, ...
  std::string redop;  // "sum", ...; "none", or "" where the version printed none
  int root = -1;
  int nranks = 0;    // the Rank lines seen so far (0: none printed)
  int cycle = 0;     // -N: 0 for the first sweep, 1 for the next, ...
  int64_t line = 0;  // 1-based line of the text it came from (0: from JSON)

  bool has_oop = true;  // false where nccl-tests printed in-place only
  double oop_time_us = 0, oop_algbw_gbps = 0, oop_busbw_gbps = 0;
  std::optional<int64_t> oop_wrong;     // #wrong; absent when N/A or not printed
  std::optional<double> oop_max_error;  // old "error" column
  bool has_ip = true;
  double ip_time_us = 0, ip_algbw_gbps = 0, ip_busbw_gbps = 0;
  std::optional<int64_t> ip_wrong;
  std::optional<double> ip_max_error;
};

class NcclTestsParser {
 public:
  // `binary` (e.g. "/opt/nccl-tests/build/alltoall_perf") names the op until
  // the output does ("Collective test starting", printed by newer versions).
  explicit NcclTestsParser(std::string_view binary = "");

  // Takes the next chunk of output; returns the rows its complete lines
  // finished. A partial last line waits for the rest; "\r\n" is accepted.
  std::vector<NcclTestsRow> Feed(std::string_view chunk);
  // At end of output: parses a last line that had no newline.
  std::vector<NcclTestsRow> Finish();

  const NcclTestsHeader& header() const { return header_; }

  // "line N: why", for lines that looked like table content but were not.
  std::vector<std::string> errors;
  // "line N: text", nccl-tests' own failure reports (the run failed).
  std::vector<std::string> failures;

 private:
  // Where things are in a row, from the column header's titles.
  struct Group {
    int width = 0;  // titles in the group, from its time column on
    int algbw = -1, busbw = -1, wrong = -1, error = -1;  // offsets in it
  };
  struct Layout {
    bool valid = false;
    bool has_type = false, has_redop = false, has_root = false;
    int leading = 0;  // titles before the first time column
    Group groups[2];
    int ngroups = 0;
    bool timestamp = false;  // a trailing "timestamp" (two tokens per row)
  };

  void Line(std::string_view line, std::vector<NcclTestsRow>& out);
  void CommentLine(std::string_view body);
  void ColumnHeader(const std::vector<std::string_view>& titles);
  bool Row(const std::vector<std::string_view>& tokens, NcclTestsRow& row, std::string& why) const;

  std::string pending_;
  int64_t line_no_ = 0;
  NcclTestsHeader header_;
  Layout layout_;
  bool in_table_ = false;                  // after a column header, before its footer
  bool in_place_first_ = false;            // the group titles said "in-place" first
  std::optional<NcclTestsRow> first_row_;  // of the table, to count cycles
  int cycle_ = 0;
};

// Reads the JSON document `nccl-tests -J FILE` writes (src/util.cu: version
// 1: {"version":1, "args":[...], "config":{..., "devices":[...]},
// "results":[{"size","count","type","redop","root" (a string, "%6i"),
// "out_of_place"|null, "in_place": {"time"|"cpu_time", "alg_bw", "bus_bw",
// "nwrong"|null}, ...}], ...}). Doubles may be the string "nan". Errors
// name `origin` and the offending key.
Result<std::vector<NcclTestsRow>> ParseNcclTestsJson(const std::string& text,
                                                     const std::string& origin);

// One placement of a row as fdrill's metrics record (docs/reference/formats.md):
// rank 0, `iter`, `wall_ns` as given; time_ms = nccl-tests' time, which is
// the mean over its -n iterations, not one iteration; dtype in fdrill's
// names (float -> float32, half -> float16, double -> float64); wrong = #wrong,
// 0 with "data_checked": false when nccl-tests did not count it (N/A, or
// an old version's "error" column, kept as "max_error"). No wait_ms: nccl-tests
// has no line-up before each collective to measure. Adds "source":
// "nccl-tests" and "in_place".
Json ToMetricsRecord(const NcclTestsRow& row, int64_t iter, int64_t wall_ns, bool in_place);

}  // namespace fdrill
