// Per-iteration times of a run too long to keep them all (--duration), in
// bounded memory: count, min, max, mean and stdev exactly; a uniform random
// sample of at most `keep` times (reservoir sampling, a fixed seed: the same
// times give the same sample); and percentiles that are exact while every
// time is kept, and beyond that read from a log-scale histogram whose buckets
// are 2^(1/128) wide, so that a percentile is within kPercentileError
// (relative) of the exact one. Memory: `keep` doubles plus at most one
// counter per occupied bucket (a few thousand between 1 ns and 10^6 s).
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "tools/common/stats.h"

namespace omnib {

class TimeTally {
 public:
  // Half a bucket, as a ratio: 2^(1/256) - 1 = 0.002711..., rounded up.
  static constexpr double kPercentileError = 0.0028;

  explicit TimeTally(size_t keep);

  // `us` > 0 (smaller values count as the smallest bucket's).
  void add(double us);

  uint64_t count() const { return count_; }
  // Every time is kept: stats() equals summarize() of them all.
  bool exact() const { return count_ <= keep_; }
  // summarize() of the kept times while exact(); else min, max, mean and
  // stdev exact, median, p95 and p99 from the histogram.
  TimeStats stats() const;
  // The kept times: all of them while exact(), else a uniform sample of
  // `keep`, in no particular order.
  const std::vector<double>& kept() const { return kept_; }

 private:
  double percentile(double pct) const;
  double value_of_rank(uint64_t rank) const;  // 0-based order statistic, from the histogram

  size_t keep_;
  uint64_t count_ = 0;
  double min_ = 0, max_ = 0, mean_ = 0, m2_ = 0;  // Welford's running moments
  std::vector<double> kept_;
  std::map<int, uint64_t> buckets_;  // bucket index -> times in it
  uint64_t rng_;
};

}  // namespace omnib
