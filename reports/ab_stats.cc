#include "reports/ab_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <boost/math/distributions/students_t.hpp>

namespace fdrill {

namespace {

struct Moments {
  double n = 0;
  double mean = 0;
  double var = 0;  // sample variance (n - 1); 0 for one value
};

Moments Of(const std::vector<double>& v) {
  Moments m;
  m.n = static_cast<double>(v.size());
  m.mean = std::accumulate(v.begin(), v.end(), 0.0) / m.n;
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - m.mean) * (x - m.mean);
    m.var = ss / (m.n - 1);
  }
  return m;
}

}  // namespace

double StudentT(double p, double df) {
  return boost::math::quantile(boost::math::students_t_distribution<double>(df), p);
}

std::optional<RatioInterval> RatioOfMeans(const std::vector<double>& a,
                                          const std::vector<double>& b, double confidence) {
  if (a.empty() || b.empty() || (a.size() < 2 && b.size() < 2)) return std::nullopt;
  auto finite = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  if (!finite(a) || !finite(b)) return std::nullopt;
  auto positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
  };
  RatioInterval e;
  e.log_scale = positive(a) && positive(b);
  Moments ma, mb;
  double scale = 1;
  if (e.log_scale) {
    auto logs = [](const std::vector<double>& v) {
      std::vector<double> out;
      for (double x : v) out.push_back(std::log(x));
      return out;
    };
    ma = Of(logs(a));
    mb = Of(logs(b));
  } else {
    ma = Of(a);
    mb = Of(b);
    if (!(ma.mean > 0)) return std::nullopt;
    scale = ma.mean;
  }
  // One value on a side: the other side's variance stands for both.
  if (ma.n < 2) ma.var = mb.var;
  if (mb.n < 2) mb.var = ma.var;
  const double va = ma.var / ma.n, vb = mb.var / mb.n;
  const double se = std::sqrt(va + vb);
  double df;
  if (ma.n < 2 || mb.n < 2) {
    df = std::max(ma.n, mb.n) - 1;
  } else if (se > 0) {
    df = (va + vb) * (va + vb) /
         (va * va / (ma.n - 1) + vb * vb / (mb.n - 1));  // Welch–Satterthwaite
  } else {
    df = ma.n + mb.n - 2;
  }
  const double t = se > 0 ? StudentT(0.5 + confidence / 2, df) : 0;
  const double d = mb.mean - ma.mean;
  if (e.log_scale) {
    e.ratio = std::exp(d);
    e.low = std::exp(d - t * se);
    e.high = std::exp(d + t * se);
  } else {
    e.ratio = 1 + d / scale;
    e.low = 1 + (d - t * se) / scale;
    e.high = 1 + (d + t * se) / scale;
  }
  // Per-sample spread, pooled, on the interval's scale.
  e.spread = std::sqrt((ma.var + mb.var) / 2) / scale;
  e.df = df;
  return e;
}

std::vector<double> BatchMeans(const std::vector<double>& series, int batches,
                               const std::vector<double>* weights) {
  const int n = static_cast<int>(series.size());
  const int k = std::min(batches, n / 2);
  if (k < 2) return {};
  const int size = n / k;
  std::vector<double> out;
  for (int i = 0; i < k; ++i) {
    const int first = i * size;
    const int last = i == k - 1 ? n : first + size;
    double sum = 0, total = 0;
    for (int j = first; j < last; ++j) {
      const double w = weights != nullptr ? (*weights)[j] : 1;
      sum += w * series[j];
      total += w;
    }
    out.push_back(total > 0 ? sum / total : 0);
  }
  return out;
}

std::optional<int> RunsNeeded(const RatioInterval& e, double threshold, double confidence,
                              int max) {
  if (e.spread == 0) return 0;
  // On the interval's scale: the distance from the ratio to the nearer of
  // 1 - threshold and 1 + threshold, which the half-width must undercut.
  auto scaled = [&](double r) { return e.log_scale ? std::log(r) : r - 1; };
  const double at = scaled(e.ratio);
  const double margin =
      std::min(std::abs(at - scaled(1 - threshold)), std::abs(at - scaled(1 + threshold)));
  if (!(margin > 0)) return std::nullopt;
  for (int n = 2; n <= max; ++n) {
    const double half = StudentT(0.5 + confidence / 2, 2.0 * n - 2) * e.spread * std::sqrt(2.0 / n);
    if (half < margin) return n;
  }
  return std::nullopt;
}

}  // namespace fdrill
