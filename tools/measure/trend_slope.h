// The slope of a series and how sure it is: Sen's estimator (the median of
// the slopes between every pair of points) with its rank-based confidence
// interval (Sen 1968, from Kendall's tau). Robust where least squares is
// not: a single step or a few wild points move a median of pairwise slopes
// little, and the interval widens with the noise instead of assuming its
// shape. What the resources verdict fits to resident memory over calls.
#pragma once

#include <cstdint>
#include <vector>

namespace omnib {

struct TrendPoint {
  double x = 0;  // strictly increasing along a series
  double y = 0;
};

struct TrendSlope {
  double slope = 0;  // the median pairwise slope
  // The 99.9% confidence interval of the slope; -inf / +inf where the
  // points are too few for the interval to end inside the pairwise slopes.
  double low = 0;
  double high = 0;
  uint64_t points = 0;
};

// Two-sided 99.9%: a series without a trend is called rising no more than
// once in 2000, so that a run is called growing by chance less than once in
// 180 even with the CI soak's 11 processes each judged.
inline constexpr double kTrendConfidenceZ = 3.2905;

// The slope of `points` (x strictly increasing); fewer than 2 points give a
// slope of 0 with an unbounded interval. O(n^2) time and memory in the
// number of points, which the series' sampler bounds (resource_series.h).
TrendSlope fit_trend(const std::vector<TrendPoint>& points);

}  // namespace omnib
