#include "tools/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace omnib {

double percentile_sorted(const std::vector<double>& sorted, double pct) {
  if (sorted.empty()) return 0;
  const double pos = pct / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return percentile_sorted(values, 50);
}

TimeStats summarize(std::vector<double> samples) {
  TimeStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const auto n = static_cast<double>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.median = percentile_sorted(samples, 50);
  s.p95 = percentile_sorted(samples, 95);
  s.p99 = percentile_sorted(samples, 99);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  double sq = 0;
  for (double x : samples) sq += (x - s.mean) * (x - s.mean);
  s.stdev = samples.size() > 1 ? std::sqrt(sq / (n - 1)) : 0;
  return s;
}

}  // namespace omnib
