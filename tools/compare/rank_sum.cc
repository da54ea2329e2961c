#include "tools/compare/rank_sum.h"

#include <algorithm>

namespace omnib {

RankSum rank_sum(std::vector<std::pair<double, bool>> values) {
  std::sort(values.begin(), values.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  RankSum out;
  size_t i = 0;
  while (i < values.size()) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1].first == values[i].first) ++j;
    const double t = static_cast<double>(j - i + 1);
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2.0;
    for (size_t k = i; k <= j; ++k)
      if (values[k].second) out.flagged += midrank;
    if (t > 1) {
      out.ties = true;
      out.tie_term += t * t * t - t;
    }
    i = j + 1;
  }
  return out;
}

}  // namespace omnib
