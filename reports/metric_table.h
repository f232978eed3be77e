// MetricTable: metrics.jsonl's records as columns. A day-long burn-in has
// tens of millions of them; as MetricRecords (three strings each) they took
// ~190 bytes a record, here 52: the numbers of each record in one vector per
// key, and what a rank's records share — workload, node, op, rank, nranks,
// attempt, bytes — once per distinct combination (a Source), which each
// record names by index. Records keep file order. Sources never move once
// added (a deque), so the node names Iterations view (series.h) stay valid
// while the table lives, moves included. Not thread-safe to fill; safe to read
// from many threads once filled.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "reports/huge_page_allocator.h"

namespace fdrill {

// One line of metrics.jsonl: one rank's record of one timed iteration.
struct MetricRecord {
  int rank = 0;
  int nranks = 0;    // 0 when the record does not say
  std::string node;  // controller-side node name; the rank's host when absent
  int64_t iter = 0;
  // Which launch of the workload wrote it: 0, then 1, 2, ... after each
  // restart (a resumed --train run repeats the steps since its checkpoint).
  int attempt = 0;
  std::string op;  // "all_reduce", ...; empty when absent
  // The tenant that wrote it (workloads:); empty for a drill's one workload.
  std::string workload;
  int64_t bytes = 0;
  double time_ms = 0;     // the collective alone
  double wait_ms = 0;     // the line-up before it (a straggler's delay); 0 when absent
  double algbw_gbps = 0;  // 0 when absent
  double busbw_gbps = 0;  // 0 when absent
  int64_t wrong = 0;      // elements that failed the data check
  double t = 0;           // controller seconds since start, end of the iteration
};

// One metrics line as metric_fast_path.h reads it: a MetricRecord with views
// into the line instead of strings (valid while the line is).
struct MetricFields {
  int rank = 0;
  int nranks = 0;
  std::string_view node;  // "node", else "host"
  int64_t iter = 0;
  int attempt = 0;
  std::string_view op;
  std::string_view workload;
  int64_t bytes = 0;
  double time_ms = 0;
  double wait_ms = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  int64_t wrong = 0;
  double t = 0;
};

class MetricTable {
 public:
  // What a rank's records share.
  struct Source {
    std::string workload;
    std::string node;
    std::string op;
    int rank = 0;
    int nranks = 0;
    int attempt = 0;
    int64_t bytes = 0;
  };

  MetricTable() = default;
  // Copies get sources of their own (views into the original stay on it).
  MetricTable(const MetricTable& other) = default;
  MetricTable& operator=(const MetricTable& other) = default;
  MetricTable(MetricTable&&) = default;
  MetricTable& operator=(MetricTable&&) = default;

  void Append(const MetricFields& f);
  void push_back(const MetricRecord& m);
  void reserve(size_t records);

  size_t size() const { return t_.size(); }
  bool empty() const { return t_.empty(); }
  // Record i rebuilt whole (tests, error messages; not for loops over all).
  MetricRecord operator[](size_t i) const;

  const Source& source(size_t i) const { return sources_[source_[i]]; }
  double t(size_t i) const { return t_[i]; }
  double time_ms(size_t i) const { return time_ms_[i]; }
  double wait_ms(size_t i) const { return wait_ms_[i]; }
  double algbw_gbps(size_t i) const { return algbw_[i]; }
  double busbw_gbps(size_t i) const { return busbw_[i]; }
  int64_t iter(size_t i) const { return iter_[i]; }
  // The records with wrong > 0 (rare: a failed data check), in file order,
  // as (index, wrong).
  const std::vector<std::pair<size_t, int64_t>>& wrong() const { return wrong_; }

 private:
  uint32_t SourceOf(const MetricFields& f);

  using SourceKey = std::tuple<std::string, std::string, std::string, int, int, int, int64_t>;
  std::deque<Source> sources_;
  std::map<SourceKey, uint32_t> source_ids_;
  // The source each rank (mod kLastSize) used last: records of one rank
  // nearly always share it, so the map is consulted only when it changes.
  static constexpr size_t kLastSize = 64;
  std::vector<uint32_t> last_;

  template <typename T>
  using Column = std::vector<T, HugePageAllocator<T>>;
  Column<uint32_t> source_;
  Column<double> t_, time_ms_, wait_ms_, algbw_, busbw_;
  Column<int64_t> iter_;
  std::vector<std::pair<size_t, int64_t>> wrong_;
};

// The indices of the records of `workload`, in file order.
std::vector<uint32_t> RecordsOfWorkload(const MetricTable& table, std::string_view workload);

}  // namespace fdrill
