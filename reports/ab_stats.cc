#include "reports/ab_stats.h"

#include <algorithm>
#include <cmath>

#include "reports/stats.h"

namespace fdrill {

namespace {

// splitmix64 (Steele, Lea, Flood 2014): small, fast, and the same everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n < 2^32, by Lemire's multiply-shift on the top 32
  // bits (bias below n / 2^32: invisible in a 2000-resample interval).
  size_t Below(size_t n) { return static_cast<size_t>(((Next() >> 32) * n) >> 32); }

 private:
  uint64_t state_;
};

// The median of `draw` (reordered in place), as Median() defines it.
double MedianInPlace(std::vector<double>& draw) {
  const size_t n = draw.size();
  const auto mid = draw.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(draw.begin(), mid, draw.end());
  if (n % 2 == 1) return *mid;
  const double below = *std::max_element(draw.begin(), mid);
  return (below + *mid) / 2;
}

double ResampledMedian(const std::vector<double>& x, SplitMix64& rng, std::vector<double>& draw) {
  draw.resize(x.size());
  for (double& d : draw) d = x[rng.Below(x.size())];
  return MedianInPlace(draw);
}

}  // namespace

std::optional<Interval> BootstrapRatioOfMedians(const std::vector<double>& a,
                                                const std::vector<double>& b, int resamples,
                                                uint64_t seed, double confidence) {
  if (a.empty() || b.empty() || resamples < 1) return std::nullopt;
  SplitMix64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  std::vector<double> draw;
  for (int i = 0; i < resamples; ++i) {
    const double ma = ResampledMedian(a, rng, draw);
    const double mb = ResampledMedian(b, rng, draw);
    if (!(ma > 0)) return std::nullopt;
    ratios.push_back(mb / ma);
  }
  const double tail = (1 - confidence) / 2 * 100;
  return Interval{.low = *Percentile(ratios, tail), .high = *Percentile(ratios, 100 - tail)};
}

std::optional<MannWhitney> MannWhitneyU(const std::vector<double>& a,
                                        const std::vector<double>& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  struct Value {
    double x;
    bool from_b;
  };
  std::vector<Value> all;
  all.reserve(a.size() + b.size());
  for (double x : a) all.push_back({x, false});
  for (double x : b) all.push_back({x, true});
  std::sort(all.begin(), all.end(), [](const Value& l, const Value& r) { return l.x < r.x; });

  // Midranks (1-based) of tied runs; tie_term = Σ (t³ - t) over the runs.
  double rank_sum_b = 0;
  double tie_term = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].x == all[i].x) ++j;
    const double t = static_cast<double>(j - i);
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (all[k].from_b) rank_sum_b += midrank;
    }
    tie_term += t * t * t - t;
    i = j;
  }
  const double na = static_cast<double>(a.size());
  const double nb = static_cast<double>(b.size());
  const double n = na + nb;
  MannWhitney out;
  out.u = rank_sum_b - nb * (nb + 1) / 2;
  const double mean = na * nb / 2;
  const double variance = n > 1 ? na * nb / 12 * ((n + 1) - tie_term / (n * (n - 1))) : 0;
  if (!(variance > 0)) return out;  // all tied: no evidence of a difference
  const double z = std::max(0.0, std::fabs(out.u - mean) - 0.5) / std::sqrt(variance);
  out.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return out;
}

}  // namespace fdrill
