#include "tools/compare/metric_samples.h"

#include <algorithm>
#include <cmath>

#include "tools/stats.h"

namespace omnib {
namespace {

MetricSamples from_values(std::vector<double> values, std::string kind) {
  MetricSamples m;
  m.point = median_of(values);
  m.samples = std::move(values);
  m.kind = std::move(kind);
  return m;
}

template <typename Get>
std::optional<double> median_over(const std::vector<const ResultRecord*>& records, Get get) {
  std::vector<double> values;
  for (const auto* r : records)
    if (auto v = get(*r)) values.push_back(*v);
  if (values.empty()) return std::nullopt;
  return median_of(values);
}

}  // namespace

MetricSamples time_samples(const std::vector<const ResultRecord*>& records) {
  std::vector<double> values;
  for (const auto* r : records)
    for (const auto& run : r->runs) values.push_back(run.median_us);
  return from_values(std::move(values), "run medians");
}

std::optional<MetricSamples> speedup_samples(const std::vector<const ResultRecord*>& subject,
                                             const std::vector<const ResultRecord*>& other) {
  std::vector<double> values;
  for (size_t k = 0; k < std::min(subject.size(), other.size()); ++k) {
    const auto& s = subject[k]->runs;
    const auto& o = other[k]->runs;
    for (size_t i = 0; i < std::min(s.size(), o.size()); ++i)
      if (s[i].median_us > 0) values.push_back(o[i].median_us / s[i].median_us);
  }
  if (values.empty()) return std::nullopt;
  return from_values(std::move(values), "run speedups");
}

std::optional<MetricSamples> cpu_ratio_samples(const std::vector<const ResultRecord*>& subject,
                                               const std::vector<const ResultRecord*>& reference) {
  // Over the median of the reference's runs rather than run by run: the
  // host's speed is one factor per side, and pairing runs would add the
  // reference's own scatter to the subject's.
  auto ref = cpu_samples(reference);
  if (!ref || !(ref->point > 0)) return std::nullopt;
  auto own = cpu_samples(subject);
  if (!own) return std::nullopt;
  for (double& v : own->samples) v /= ref->point;
  return from_values(std::move(own->samples), "run CPU per byte over the reference's median");
}

std::optional<MetricSamples> best_dense_speedup_samples(const std::vector<const ResultRecord*>& subject,
                                                        const std::vector<AlgoRecords>& dense,
                                                        std::vector<std::string>* fastest) {
  std::vector<double> values;
  fastest->clear();
  for (size_t k = 0; k < subject.size(); ++k) {
    const auto& s = subject[k]->runs;
    for (size_t i = 0; i < s.size(); ++i) {
      const std::string* best_algo = nullptr;
      double best = 0;
      for (const auto& d : dense) {
        if (k >= d.records.size() || i >= d.records[k]->runs.size()) continue;
        const double t = d.records[k]->runs[i].median_us;
        if (t > 0 && (!best_algo || t < best)) {
          best = t;
          best_algo = &d.algo;
        }
      }
      if (!best_algo || !(s[i].median_us > 0)) continue;
      values.push_back(best / s[i].median_us);
      fastest->push_back(*best_algo);
    }
  }
  if (values.empty()) return std::nullopt;
  return from_values(std::move(values), "run speedups over the fastest dense");
}

std::optional<MetricSamples> cpu_samples(const std::vector<const ResultRecord*>& records) {
  std::vector<double> values;
  for (const auto* r : records)
    for (const auto& run : r->runs)
      if (run.cpu_ns_per_wire_byte) values.push_back(*run.cpu_ns_per_wire_byte);
  if (values.empty()) return std::nullopt;
  return from_values(std::move(values), "run CPU per byte");
}

std::optional<double> wire_bytes_point(const std::vector<const ResultRecord*>& records) {
  return median_over(records, [](const ResultRecord& r) { return r.wire_sent_per_rank_max; });
}

std::optional<double> wire_frames_point(const std::vector<const ResultRecord*>& records) {
  return median_over(records, [](const ResultRecord& r) { return r.wire_frames_per_rank_max; });
}

std::optional<double> smallest_flagged_change(double tolerance, double largest,
                                              const std::function<bool(double)>& flagged) {
  double hi = largest;
  if (!flagged(hi)) return std::nullopt;
  double lo = std::min(tolerance, hi);
  if (flagged(lo)) return lo;
  for (int i = 0; i < 40; ++i) {
    const double mid = (lo + hi) / 2;
    (flagged(mid) ? hi : lo) = mid;
  }
  return hi;
}

double relative_spread(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0;
  const double mid = median_of(samples);
  if (!(mid > 0)) return 0;
  // 3.5 median absolute deviations: about what max - min is for five runs
  // of normal scatter, but one stray run (the first of a configuration often
  // is one) does not set it.
  std::vector<double> deviations;
  for (double v : samples) deviations.push_back(std::abs(v - mid));
  return kSpreadPerDeviation * median_of(std::move(deviations)) / mid;
}

}  // namespace omnib
