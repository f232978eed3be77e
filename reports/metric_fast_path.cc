#include "reports/metric_fast_path.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>

namespace fdrill {

namespace {

// One scalar JSON value as it was written.
struct Scalar {
  enum Kind { kString, kInteger, kReal, kBool, kNull } kind = kNull;
  std::string_view text;  // a string's contents, or a number's digits
};

// The bytes a simple string holds as they are: printable ASCII but '"' and '\\'.
constexpr auto kPlainChar = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  void SkipSpace() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }
  bool Eat(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    SkipSpace();
    return i_ == s_.size();
  }

  // A string of printable ASCII without escapes; anything else is "not
  // simple" and goes to the strict path.
  bool String(std::string_view* out) {
    SkipSpace();
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    const size_t begin = ++i_;
    while (i_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (kPlainChar[c]) {
        ++i_;
        continue;
      }
      if (c != '"') return false;
      *out = s_.substr(begin, i_ - begin);
      ++i_;
      return true;
    }
    return false;
  }

  bool Value(Scalar* out) {
    SkipSpace();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '"') {
      out->kind = Scalar::kString;
      return String(&out->text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return Number(out);
    for (auto [word, kind] : {std::pair{std::string_view("true"), Scalar::kBool},
                              std::pair{std::string_view("false"), Scalar::kBool},
                              std::pair{std::string_view("null"), Scalar::kNull}}) {
      if (s_.substr(i_, word.size()) == word) {
        i_ += word.size();
        out->kind = kind;
        out->text = word;
        return true;
      }
    }
    return false;  // an object, an array, or not JSON
  }

 private:
  // JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  bool Number(Scalar* out) {
    const size_t begin = i_;
    auto digits = [&] {
      const size_t from = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ - from;
    };
    if (s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
    } else if (digits() == 0) {
      return false;
    }
    out->kind = Scalar::kInteger;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (digits() == 0) return false;
      out->kind = Scalar::kReal;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (digits() == 0) return false;
      out->kind = Scalar::kReal;
    }
    out->text = s_.substr(begin, i_ - begin);
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
};

bool ToInt64(const Scalar& v, int64_t* out) {
  if (v.kind != Scalar::kInteger) return false;
  auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), *out);
  return ec == std::errc() && end == v.text.data() + v.text.size();
}

bool ToDouble(const Scalar& v, double* out) {
  if (v.kind != Scalar::kInteger && v.kind != Scalar::kReal) return false;
  auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), *out);
  return ec == std::errc() && end == v.text.data() + v.text.size();
}

// The keys ParseMetricLine reads, as bits: each may appear once.
constexpr uint32_t kRank = 1 << 0, kNranks = 1 << 1, kHost = 1 << 2, kNode = 1 << 3, kIter = 1 << 4,
                   kOp = 1 << 5, kBytes = 1 << 6, kTimeMs = 1 << 7, kAlgbw = 1 << 8,
                   kBusbw = 1 << 9, kWrong = 1 << 10, kT = 1 << 11, kWaitMs = 1 << 12,
                   kAttempt = 1 << 13, kWorkload = 1 << 14;

// K == LIT, with LIT's length known here: a compare the compiler inlines
// (string_view's == calls memcmp, a tenth of the report's time at 10 M records).
template <size_t N>
bool Is(std::string_view k, const char (&lit)[N]) {
  return std::memcmp(k.data(), lit, N - 1) == 0;
}

uint32_t KeyOf(std::string_view k) {
  switch (k.size()) {
    case 1:
      return k[0] == 't' ? kT : 0;
    case 2:
      return Is(k, "op") ? kOp : 0;
    case 4:
      return Is(k, "rank")   ? kRank
             : Is(k, "host") ? kHost
             : Is(k, "node") ? kNode
             : Is(k, "iter") ? kIter
                             : 0;
    case 5:
      return Is(k, "bytes") ? kBytes : Is(k, "wrong") ? kWrong : 0;
    case 6:
      return Is(k, "nranks") ? kNranks : 0;
    case 7:
      return Is(k, "time_ms")   ? kTimeMs
             : Is(k, "wait_ms") ? kWaitMs
             : Is(k, "attempt") ? kAttempt
                                : 0;
    case 8:
      return Is(k, "workload") ? kWorkload : 0;
    case 10:
      return Is(k, "algbw_gbps") ? kAlgbw : Is(k, "busbw_gbps") ? kBusbw : 0;
    default:
      return 0;
  }
}

}  // namespace

bool ParseMetricFields(std::string_view line, MetricFields* out) {
  Scanner scan(line);
  if (!scan.Eat('{')) return false;
  MetricFields m;
  std::string_view host, node;
  uint32_t seen = 0;    // keys present, null or not
  uint32_t valued = 0;  // keys present and not null
  if (!scan.Eat('}')) {
    do {
      std::string_view key;
      Scalar v;
      if (!scan.String(&key) || !scan.Eat(':') || !scan.Value(&v)) return false;
      const uint32_t bit = KeyOf(key);
      if (bit == 0) continue;  // a key the reports do not read
      if (seen & bit) return false;
      seen |= bit;
      if (v.kind == Scalar::kNull) continue;  // null reads as absent
      valued |= bit;
      int64_t i = 0;
      bool ok = true;
      switch (bit) {
        case kRank:
          ok = ToInt64(v, &i);
          m.rank = static_cast<int>(i);
          break;
        case kNranks:
          ok = ToInt64(v, &i);
          m.nranks = static_cast<int>(i);
          break;
        case kIter:
          ok = ToInt64(v, &m.iter);
          break;
        case kAttempt:
          ok = ToInt64(v, &i) && i >= 0;
          m.attempt = static_cast<int>(i);
          break;
        case kBytes:
          ok = ToInt64(v, &m.bytes);
          break;
        case kWrong:
          ok = ToInt64(v, &m.wrong);
          break;
        case kTimeMs:
          ok = ToDouble(v, &m.time_ms);
          break;
        case kWaitMs:
          ok = ToDouble(v, &m.wait_ms) && m.wait_ms >= 0;
          break;
        case kAlgbw:
          ok = ToDouble(v, &m.algbw_gbps);
          break;
        case kBusbw:
          ok = ToDouble(v, &m.busbw_gbps);
          break;
        case kT:
          ok = ToDouble(v, &m.t);
          break;
        case kHost:
          ok = v.kind == Scalar::kString;
          host = v.text;
          break;
        case kNode:
          ok = v.kind == Scalar::kString;
          node = v.text;
          break;
        case kOp:
          ok = v.kind == Scalar::kString;
          m.op = v.text;
          break;
        case kWorkload:
          // Tenant names are plain words (the loader's rule): no escapes.
          ok = v.kind == Scalar::kString && v.text.find('\\') == std::string_view::npos;
          m.workload = v.text;
          break;
      }
      if (!ok) return false;
    } while (scan.Eat(','));
    if (!scan.Eat('}')) return false;
  }
  if (!scan.AtEnd()) return false;
  constexpr uint32_t kRequired = kRank | kIter | kBytes | kTimeMs | kWrong | kT;
  if ((valued & kRequired) != kRequired || !(m.time_ms > 0)) return false;
  m.node = (valued & kNode) ? node : host;
  *out = m;
  return true;
}

bool ParseMetricLineFast(std::string_view line, MetricRecord* out) {
  MetricFields f;
  if (!ParseMetricFields(line, &f)) return false;
  *out = {.rank = f.rank,
          .nranks = f.nranks,
          .node = std::string(f.node),
          .iter = f.iter,
          .attempt = f.attempt,
          .op = std::string(f.op),
          .workload = std::string(f.workload),
          .bytes = f.bytes,
          .time_ms = f.time_ms,
          .wait_ms = f.wait_ms,
          .algbw_gbps = f.algbw_gbps,
          .busbw_gbps = f.busbw_gbps,
          .wrong = f.wrong,
          .t = f.t};
  return true;
}

}  // namespace fdrill
