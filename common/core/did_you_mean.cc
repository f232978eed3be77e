#include "common/core/did_you_mean.h"

#include <algorithm>
#include <vector>

namespace fdrill {

namespace {
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string DidYouMean(const std::string& word, const std::set<std::string>& candidates) {
  std::string best;
  size_t best_d = 3;  // at most two edits away
  for (const auto& c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best.empty() ? "" : "did you mean \"" + best + "\"?";
}

}  // namespace fdrill
