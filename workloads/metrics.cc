#include "workloads/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "workloads/collective.h"

namespace fdrill {

namespace {

template <typename T>
void AppendNumber(T value, std::string* out) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof(text), value);
  out->append(text, static_cast<size_t>(end - text));
}

// JSON has no inf or nan; nlohmann writes them as null, and so do we. A
// whole number keeps a ".0" so it reads back as a float, as before.
void AppendDouble(double value, std::string* out) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  const size_t from = out->size();
  AppendNumber(value, out);
  if (out->find_first_of(".e", from) == std::string::npos) out->append(".0");
}

void AppendString(std::string_view text, std::string* out) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
  if (!plain) {
    out->append(nlohmann::json(std::string(text))
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  out->push_back('"');
  out->append(text);
  out->push_back('"');
}

// One object's members, in the order they are added (the keys are ours:
// nothing to escape).
class Members {
 public:
  explicit Members(std::string* out) : out_(out) { out_->push_back('{'); }
  void End() { out_->append("}\n"); }

  template <typename T>
  void Number(std::string_view key, T value) {
    Key(key);
    AppendNumber(value, out_);
  }
  void Double(std::string_view key, double value) {
    Key(key);
    AppendDouble(value, out_);
  }
  void String(std::string_view key, std::string_view value) {
    Key(key);
    AppendString(value, out_);
  }
  void Bool(std::string_view key, bool value) {
    Key(key);
    out_->append(value ? "true" : "false");
  }

 private:
  void Key(std::string_view key) {
    if (!first_) out_->push_back(',');
    first_ = false;
    out_->push_back('"');
    out_->append(key);
    out_->append("\":");
  }
  std::string* out_;
  bool first_ = true;
};

}  // namespace

void AppendJsonLine(const IterationRecord& r, std::string* out) {
  // formats.md's key order, which helps people reading the file; readers
  // must not depend on it.
  Members m(out);
  m.Number("rank", r.rank);
  m.Number("nranks", r.nranks);
  m.String("host", r.host);
  m.Number("iter", r.iter);
  m.String("op", r.op);
  m.String("dtype", r.dtype);
  m.String("redop", r.redop);
  m.Number("bytes", r.bytes);
  m.Number("count", r.count);
  m.Number("wall_ns", r.wall_ns);
  m.Number("mono_ns", r.mono_ns);
  m.Double("time_ms", r.time_ms);
  if (!r.step) m.Double("wait_ms", r.wait_ms);  // the sweep's line-up; training has none
  m.Double("algbw_gbps", r.algbw_gbps);
  m.Double("busbw_gbps", r.busbw_gbps);
  m.Number("wrong", r.wrong);
  if (r.step) {
    m.Number("step", *r.step);
    m.Bool("restarted", r.restarted);
  }
  m.End();
}

std::string ToJsonLine(const IterationRecord& record) {
  std::string line;
  AppendJsonLine(record, &line);
  line.pop_back();
  return line;
}

void IterationRecord::Stamp(int64_t iteration, int64_t wall, int64_t mono_end, double time_ns,
                            double bus_factor, uint64_t wrong_elements) {
  iter = iteration;
  wall_ns = wall;
  mono_ns = mono_end;
  time_ms = time_ns / 1e6;
  algbw_gbps = AlgBandwidthGbps(bytes, time_ns);
  busbw_gbps = algbw_gbps * bus_factor;
  wrong = wrong_elements;
}

}  // namespace fdrill
