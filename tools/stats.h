// Summary statistics of per-iteration times.
#pragma once

#include <vector>

namespace omnib {

struct TimeStats {
  double median = 0, p95 = 0, p99 = 0, min = 0, max = 0, mean = 0, stdev = 0;
  double cv() const { return mean > 0 ? stdev / mean : 0; }
};

// Percentiles interpolate linearly between closest ranks; stdev is the
// sample standard deviation (n-1). Empty input gives all zeros.
TimeStats summarize(std::vector<double> samples);

// Linear-interpolated percentile (0..100) of sorted samples.
double percentile_sorted(const std::vector<double>& sorted, double pct);

// The median (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> values);

}  // namespace omnib
