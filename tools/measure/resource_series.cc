#include "tools/measure/resource_series.h"

namespace omnib {

void ResourceSeries::add(uint64_t round, const ResourceSample& sample) {
  points_.push_back({round, sample.rss_bytes, sample.threads, sample.fds});
  if (points_.size() < kMaxSeriesPoints) return;
  // Keep the points on the doubled stride (round 0 among them: the count
  // after the first round is what threads and descriptors are judged against).
  stride_ *= 2;
  size_t kept = 0;
  for (const ResourcePoint& p : points_)
    if (p.round % stride_ == 0) points_[kept++] = p;
  points_.resize(kept);
}

void ResourceSeries::clear() {
  points_.clear();
  stride_ = 1;
}

}  // namespace omnib
