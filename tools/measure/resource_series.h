// After which timed rounds (one call of each algorithm) a process samples
// its holdings, in bounded memory: every round at first, then, each time
// the series fills, every other point is dropped and the stride doubles. The
// points stay evenly spaced over the rounds so far, a size of a million
// rounds reads /proc about a thousand times, and the series that travels to
// rank 0 never holds more than kMaxSeriesPoints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tools/measure/process_resources.h"

namespace omnib {

// 128: after a halving 64 points remain, whose later half (32) has the
// trend's 99.9% interval end at the 146th of 496 pairwise slopes, so a
// steady leak still clears it by far; and the verdict's 8128 pairwise slopes of 128 points take well
// under a millisecond per process on rank 0.
inline constexpr size_t kMaxSeriesPoints = 128;

class ResourceSeries {
 public:
  // Whether the sample after timed round `round` (0-based, every round
  // offered in order) is kept: read /proc only when it is.
  bool wants(uint64_t round) const { return round % stride_ == 0; }
  // Keeps the sample after `round` (one that wants() took).
  void add(uint64_t round, const ResourceSample& sample);
  const std::vector<ResourcePoint>& points() const { return points_; }
  // A new size: no points, every round wanted again.
  void clear();

 private:
  std::vector<ResourcePoint> points_;
  uint64_t stride_ = 1;
};

}  // namespace omnib
