#include "tools/measure/trend_slope.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace omnib {

TrendSlope fit_trend(const std::vector<TrendPoint>& points) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  TrendSlope out{0, -kInf, kInf, points.size()};
  const size_t n = points.size();
  if (n < 2) return out;
  std::vector<double> slopes;
  slopes.reserve(n * (n - 1) / 2);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) slopes.push_back((points[j].y - points[i].y) / (points[j].x - points[i].x));
  std::sort(slopes.begin(), slopes.end());
  const size_t pairs = slopes.size();
  out.slope = pairs % 2 ? slopes[pairs / 2] : (slopes[pairs / 2 - 1] + slopes[pairs / 2]) / 2;
  // Kendall's S has variance n(n-1)(2n+5)/18 when nothing trends. Ties
  // (page-granular memory that holds still between pages) would lower it;
  // leaving them uncorrected widens the interval: a tie can hide a trend,
  // never make one.
  const double nd = static_cast<double>(n);
  const double c = kTrendConfidenceZ * std::sqrt(nd * (nd - 1) * (2 * nd + 5) / 18);
  // 1-based ranks of the interval's ends among the sorted slopes: as many
  // slopes below the lower end as above the upper one.
  const double lower_rank = std::floor((static_cast<double>(pairs) - c) / 2);
  if (lower_rank >= 1) {
    out.low = slopes[static_cast<size_t>(lower_rank) - 1];
    out.high = slopes[pairs - static_cast<size_t>(lower_rank)];
  }
  return out;
}

}  // namespace omnib
