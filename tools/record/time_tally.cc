#include "tools/record/time_tally.h"

#include <algorithm>
#include <cmath>

namespace omnib {
namespace {

constexpr double kBucketsPerOctave = 128;
constexpr double kSmallest = 1e-3;  // microseconds: 1 ns
constexpr uint64_t kSeed = 0x9e3779b97f4a7c15ull;

int bucket_of(double us) { return static_cast<int>(std::floor(std::log2(std::max(us, kSmallest)) * kBucketsPerOctave)); }

// The geometric middle of a bucket: within half a bucket of anything in it.
double middle_of(int bucket) { return std::exp2((bucket + 0.5) / kBucketsPerOctave); }

// splitmix64: a small, fast, well-mixed generator for the reservoir.
uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

TimeTally::TimeTally(size_t keep) : keep_(keep), rng_(kSeed) {}

void TimeTally::add(double us) {
  ++count_;
  if (count_ == 1) {
    min_ = max_ = us;
  } else {
    min_ = std::min(min_, us);
    max_ = std::max(max_, us);
  }
  const double delta = us - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (us - mean_);
  ++buckets_[bucket_of(us)];
  // Reservoir sampling (Algorithm R): every time seen so far is kept with
  // the same probability keep / count.
  if (kept_.size() < keep_) {
    kept_.push_back(us);
  } else if (keep_ > 0) {
    const uint64_t slot = next_random(rng_) % count_;
    if (slot < keep_) kept_[slot] = us;
  }
}

double TimeTally::value_of_rank(uint64_t rank) const {
  uint64_t seen = 0;
  for (const auto& [bucket, n] : buckets_) {
    seen += n;
    if (rank < seen) return std::clamp(middle_of(bucket), min_, max_);
  }
  return max_;
}

// The same linear interpolation between closest ranks as percentile_sorted,
// on the histogram's values of those ranks.
double TimeTally::percentile(double pct) const {
  const double pos = pct / 100.0 * static_cast<double>(count_ - 1);
  const auto lo = static_cast<uint64_t>(std::floor(pos));
  const uint64_t hi = std::min(lo + 1, count_ - 1);
  const double a = value_of_rank(lo), b = value_of_rank(hi);
  return a + (b - a) * (pos - static_cast<double>(lo));
}

TimeStats TimeTally::stats() const {
  if (exact()) return summarize(kept_);
  TimeStats s;
  s.min = min_;
  s.max = max_;
  s.mean = mean_;
  s.stdev = std::sqrt(m2_ / static_cast<double>(count_ - 1));
  s.median = percentile(50);
  s.p95 = percentile(95);
  s.p99 = percentile(99);
  return s;
}

}  // namespace omnib
