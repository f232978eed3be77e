#include "workloads/nccl_tests_output.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

namespace fdrill {

namespace {

// A launcher writes whatever it gets; one line longer than this with no
// newline is not nccl-tests output and is dropped rather than buffered.
constexpr size_t kMaxLine = 64 * 1024;

std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

bool ParseInt(std::string_view s, int64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool ParseDouble(std::string_view s, double& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// The first word after the colon of a footer line whose label starts at
// LABEL ("# Out of bounds values : 0 OK" -> "0"); "" when none follows.
std::string_view FooterValue(std::string_view body, size_t label) {
  auto v = Tokens(body.substr(body.find(':', label) + 1));
  return v.empty() ? std::string_view() : v[0];
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "/opt/nccl-tests/build/all_reduce_perf" -> "all_reduce"; "alltoall_perf_mpi" -> "alltoall".
std::string OpFromBinary(std::string_view binary) {
  binary = Trim(binary);
  if (auto slash = binary.rfind('/'); slash != std::string_view::npos)
    binary.remove_prefix(slash + 1);
  // all_reduce_perf, alltoall_perf_mpi, ...: the op; anything else (a
  // wrapper script) names none, and the output's own header may.
  auto perf = binary.find("_perf");
  return perf == std::string_view::npos ? std::string() : std::string(binary.substr(0, perf));
}

// Drops what a launcher puts before each line: Open MPI's --tag-output
// "[1,0]<stdout>:" and srun --label's "  0: ".
std::string_view StripLauncherPrefix(std::string_view l) {
  if (StartsWith(l, "[")) {
    size_t close = l.find("]<std");
    if (close != std::string_view::npos && close < 32) {
      size_t colon = l.find(">:", close);
      if (colon != std::string_view::npos) return l.substr(colon + 2);
    }
  }
  size_t i = l.find_first_not_of(' ');
  if (i != std::string_view::npos) {
    size_t j = i;
    while (j < l.size() && l[j] >= '0' && l[j] <= '9') ++j;
    if (j > i && j < l.size() && l[j] == ':' && (j + 1 == l.size() || l[j + 1] == ' '))
      return l.substr(j + 1);
  }
  return l;
}

// nccl-tests' testResult chain: "host: Test NCCL failure common.cu:392 '...'",
// "host: Test CUDA failure ...", " .. host pid N: Test failure common.cu:590".
bool IsFailureLine(std::string_view l) {
  for (size_t t = l.find("Test "); t != std::string_view::npos; t = l.find("Test ", t + 1)) {
    std::string_view rest = l.substr(t + 5);
    if (StartsWith(rest, "failure")) return true;
    size_t sp = rest.find(' ');
    if (sp != std::string_view::npos && sp <= 8 && StartsWith(rest.substr(sp + 1), "failure"))
      return true;
  }
  return false;
}

bool IsNcclLogLine(std::string_view l) {
  return l.find(" NCCL INFO ") != std::string_view::npos ||
         l.find(" NCCL WARN ") != std::string_view::npos || StartsWith(l, "NCCL version ");
}

std::string Excerpt(std::string_view l) {
  l = Trim(l);
  if (l.size() > 60) return std::string(l.substr(0, 57)) + "...";
  return std::string(l);
}

// A data check's cell: "0", "237858", "1e+06" (%6g); "N/A" (empty OUT)
// without a data check. A trailing '*' (past the error threshold in some
// builds) is dropped. False, OUT untouched, when it is no number.
bool ParseMaxError(std::string_view s, std::optional<double>& out) {
  if (s == "N/A") {
    out.reset();
    return true;
  }
  if (!s.empty() && s.back() == '*') s.remove_suffix(1);
  double v = 0;
  if (!ParseDouble(s, v)) return false;
  out = v;
  return true;
}

// The #wrong cell: as ParseMaxError, and a whole count.
bool ParseWrong(std::string_view s, std::optional<int64_t>& out) {
  std::optional<double> v;
  if (!ParseMaxError(s, v)) return false;
  if (v && (!(*v >= 0) || *v != std::floor(*v) || *v > 9.0e18)) return false;
  out = v ? std::optional<int64_t>(static_cast<int64_t>(*v)) : std::nullopt;
  return true;
}

}  // namespace

NcclTestsParser::NcclTestsParser(std::string_view binary) { header_.op = OpFromBinary(binary); }

std::vector<NcclTestsRow> NcclTestsParser::Feed(std::string_view chunk) {
  std::vector<NcclTestsRow> out;
  pending_.append(chunk);
  size_t start = 0;
  for (size_t nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n', start)) {
    std::string_view line(pending_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no_;
    Line(line, out);
    start = nl + 1;
  }
  pending_.erase(0, start);
  if (pending_.size() > kMaxLine) {
    ++line_no_;
    errors.push_back("line " + std::to_string(line_no_) + ": longer than " +
                     std::to_string(kMaxLine) + " bytes without a newline; dropped");
    pending_.clear();
  }
  return out;
}

std::vector<NcclTestsRow> NcclTestsParser::Finish() {
  std::vector<NcclTestsRow> out;
  if (pending_.empty()) return out;
  std::string last = std::move(pending_);
  pending_.clear();
  std::string_view line(last);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ++line_no_;
  Line(line, out);
  return out;
}

void NcclTestsParser::Line(std::string_view line, std::vector<NcclTestsRow>& out) {
  line = StripLauncherPrefix(line);
  std::string_view body = Trim(line);
  if (body.empty()) return;
  if (body[0] == '#') {
    CommentLine(body.substr(1));
    return;
  }
  if (IsFailureLine(body)) {
    failures.push_back("line " + std::to_string(line_no_) + ": " + std::string(body));
    return;
  }
  if (IsNcclLogLine(body)) return;
  auto tokens = Tokens(body);
  const std::string where = "line " + std::to_string(line_no_) + ": ";
  if (!AllDigits(tokens[0])) {
    if (in_table_) errors.push_back(where + "not a table row: '" + Excerpt(body) + "'");
    return;
  }
  if (!layout_.valid) {
    errors.push_back(where + "a table row before any column header: '" + Excerpt(body) + "'");
    return;
  }
  NcclTestsRow row;
  std::string why;
  if (!Row(tokens, row, why)) {
    errors.push_back(where + why);
    return;
  }
  if (!first_row_) {
    first_row_ = row;
  } else if (row.size_bytes == first_row_->size_bytes && row.type == first_row_->type &&
             row.redop == first_row_->redop && row.root == first_row_->root) {
    ++cycle_;  // -N: the sweep started over
  }
  row.cycle = cycle_;
  out.push_back(std::move(row));
}

void NcclTestsParser::CommentLine(std::string_view body) {
  auto t = Tokens(body);
  if (t.empty()) return;
  if (t.size() >= 3 && t[0] == "nccl-tests" && t[1] == "version") {
    header_.version = std::string(t[2]);
    if (t.size() >= 4 && StartsWith(t[3], "(")) header_.version += " " + std::string(t[3]);
    return;
  }
  if (auto p = body.find("Collective test starting:"); p != std::string_view::npos) {
    header_.op = OpFromBinary(body.substr(p + 25));
    return;
  }
  if (t[0] == "nThread") {
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      int64_t v = 0;
      if (!ParseInt(t[i + 1], v)) continue;
      if (t[i] == "nThread") header_.nthreads = static_cast<int>(v);
      if (t[i] == "nGpus") header_.ngpus = static_cast<int>(v);
      if (t[i] == "minBytes") header_.min_bytes = v;
      if (t[i] == "maxBytes") header_.max_bytes = v;
      if (t[i] == "iters:" && i > 0 && t[i - 1] != "warmup" && t[i - 1] != "agg")
        header_.iters = static_cast<int>(v);
      if (t[i] == "validation:") header_.validation = static_cast<int>(v);
    }
    return;
  }
  if (t[0] == "Rank" && t.size() >= 2) {
    // "Rank  0 Group  0 Pid   5068 on   GENOA-06 device  0 [0x21] NVIDIA GeForce RTX 5090"
    // (before ~2.11 without "Group  0").
    NcclTestsDevice d;
    int64_t v = 0;
    if (!ParseInt(t[1], v)) return;
    d.rank = static_cast<int>(v);
    for (size_t i = 2; i + 1 < t.size(); ++i) {
      if (t[i] == "on") d.host = std::string(t[i + 1]);
      if (t[i] == "device" && ParseInt(t[i + 1], v)) d.device = static_cast<int>(v);
    }
    if (auto close = body.find(']'); close != std::string_view::npos)
      d.name = std::string(Trim(body.substr(close + 1)));
    header_.devices.push_back(std::move(d));
    return;
  }
  if (t[0] == "size" && t.size() >= 2 && t[1] == "count") {
    ColumnHeader(t);
    return;
  }
  if (body.find("out-of-place") != std::string_view::npos) {
    size_t in = body.find("in-place");
    in_place_first_ = in != std::string_view::npos && in < body.find("out-of-place");
    return;
  }
  if (auto p = body.find("Out of bounds values"); p != std::string_view::npos) {
    if (int64_t n = 0; ParseInt(FooterValue(body, p), n)) header_.out_of_bounds = n;
    in_table_ = false;
    return;
  }
  if (auto p = body.find("Avg bus bandwidth"); p != std::string_view::npos) {
    if (double bw = 0; ParseDouble(FooterValue(body, p), bw)) header_.avg_busbw_gbps = bw;
    in_table_ = false;
    return;
  }
}

void NcclTestsParser::ColumnHeader(const std::vector<std::string_view>& titles) {
  Layout l;
  size_t i = 0;
  for (; i < titles.size() && titles[i] != "time" && titles[i] != "cputime"; ++i) {
    if (titles[i] == "type") l.has_type = true;
    if (titles[i] == "redop") l.has_redop = true;
    if (titles[i] == "root") l.has_root = true;
  }
  l.leading = static_cast<int>(i);
  size_t end = titles.size();
  if (end > i && titles[end - 1] == "timestamp") {
    l.timestamp = true;
    --end;
  }
  while (i < end && l.ngroups < 2) {
    Group& g = l.groups[l.ngroups++];
    size_t j = i + 1;
    // The second group runs to the end: trailing titles such as "#iters"
    // belong to no placement and are skipped with it.
    while (j < end && (l.ngroups == 2 || (titles[j] != "time" && titles[j] != "cputime"))) ++j;
    g.width = static_cast<int>(j - i);
    for (size_t k = i; k < j; ++k) {
      int off = static_cast<int>(k - i);
      if (titles[k] == "algbw") g.algbw = off;
      if (titles[k] == "busbw") g.busbw = off;
      if (titles[k] == "#wrong") g.wrong = off;
      if (titles[k] == "error") g.error = off;
    }
    i = j;
  }
  header_.columns.assign(titles.begin(), titles.end());
  header_.cpu_time = std::find(titles.begin(), titles.end(), "cputime") != titles.end();
  l.valid = l.ngroups > 0 && l.groups[0].algbw > 0 && l.groups[0].busbw > 0 &&
            (l.ngroups == 1 || (l.groups[1].algbw > 0 && l.groups[1].busbw > 0));
  if (!l.valid) {
    errors.push_back("line " + std::to_string(line_no_) +
                     ": a column header without time, algbw and busbw");
  }
  layout_ = l;
  in_table_ = l.valid;
  first_row_.reset();
  cycle_ = 0;
}

bool NcclTestsParser::Row(const std::vector<std::string_view>& all, NcclTestsRow& row,
                          std::string& why) const {
  std::vector<std::string_view> tokens = all;
  if (layout_.timestamp && tokens.size() >= 2)
    tokens.resize(tokens.size() - 2);  // "2025-05-01 10:00:00"
  const int n = static_cast<int>(tokens.size());
  const int min_lead = 2 + (layout_.has_type ? 1 : 0);
  int width = 0;
  for (int g = 0; g < layout_.ngroups; ++g) width += layout_.groups[g].width;
  int lead = n - width;
  int first_group = 0;
  double probe = 0;
  if (lead < min_lead && layout_.ngroups == 2 && n - layout_.groups[1].width >= min_lead &&
      ParseDouble(tokens[n - layout_.groups[1].width], probe)) {
    first_group = 1;  // out-of-place left blank (nccl-tests prints in-place only there)
    lead = n - layout_.groups[1].width;
  }
  const int header_cols = layout_.leading + width;
  if (lead < min_lead) {
    why = std::to_string(n) + " columns, the header has " + std::to_string(header_cols);
    return false;
  }
  if (lead > layout_.leading) {
    why = std::to_string(n) + " columns, more than the header's " + std::to_string(header_cols);
    return false;
  }
  if (!ParseInt(tokens[0], row.size_bytes) || !ParseInt(tokens[1], row.count)) {
    why = "size and count must be integers";
    return false;
  }
  int i = 2;
  if (layout_.has_type) row.type = std::string(tokens[i++]);
  // redop and root, in that order, where present. A version that titles
  // "redop" but prints it blank (old alltoall) leaves fewer tokens: a number
  // is the root, anything else the redop.
  const int named = (layout_.has_redop ? 1 : 0) + (layout_.has_root ? 1 : 0);
  const bool full = lead - i == named;
  for (bool redop_open = layout_.has_redop; i < lead; ++i) {
    int64_t v = 0;
    bool numeric = ParseInt(tokens[i], v);
    bool is_root = full ? (!redop_open && layout_.has_root) : numeric;
    if (is_root) {
      if (!numeric) {
        why = "root '" + std::string(tokens[i]) + "' is not an integer";
        return false;
      }
      row.root = static_cast<int>(v);
      redop_open = false;
    } else {
      row.redop = std::string(tokens[i]);
      redop_open = false;
    }
  }
  int pos = lead;
  for (int g = first_group; g < layout_.ngroups; ++g) {
    const Group& grp = layout_.groups[g];
    const bool in_place = (layout_.ngroups == 2 && (g == 1) != in_place_first_) ||
                          (layout_.ngroups == 1 && in_place_first_);
    double time = 0, alg = 0, bus = 0;
    std::optional<int64_t> wrong;
    std::optional<double> max_error;
    const char* bad = nullptr;
    if (!ParseDouble(tokens[pos], time))
      bad = "time";
    else if (!ParseDouble(tokens[pos + grp.algbw], alg))
      bad = "algbw";
    else if (!ParseDouble(tokens[pos + grp.busbw], bus))
      bad = "busbw";
    else if (grp.wrong >= 0 && !ParseWrong(tokens[pos + grp.wrong], wrong))
      bad = "#wrong";
    else if (grp.error >= 0 && !ParseMaxError(tokens[pos + grp.error], max_error))
      bad = "error";
    if (bad != nullptr) {
      why = std::string(in_place ? "in-place " : "out-of-place ") + bad + " is not a number";
      return false;
    }
    if (in_place) {
      row.ip_time_us = time, row.ip_algbw_gbps = alg, row.ip_busbw_gbps = bus;
      row.ip_wrong = wrong, row.ip_max_error = max_error;
    } else {
      row.oop_time_us = time, row.oop_algbw_gbps = alg, row.oop_busbw_gbps = bus;
      row.oop_wrong = wrong, row.oop_max_error = max_error;
    }
    pos += grp.width;
  }
  const bool two = layout_.ngroups == 2;
  row.has_oop = two ? (first_group == 0 || in_place_first_) : !in_place_first_;
  row.has_ip = two ? (first_group == 0 || !in_place_first_) : in_place_first_;
  row.op = header_.op;
  row.nranks = static_cast<int>(header_.devices.size());
  row.line = line_no_;
  return true;
}

}  // namespace fdrill
