#include "tools/compare/metric_samples.h"

#include <algorithm>

#include "tools/stats.h"

namespace omnib {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return percentile_sorted(v, 50);
}

// A run's speedup over `other`: as recorded, or from the two medians when the
// record does not carry it.
std::optional<double> run_speedup(const ResultRecord& subject, const ResultRecord& other, const std::string& name) {
  auto it = subject.speedup_vs.find(name);
  if (it != subject.speedup_vs.end()) return it->second;
  if (subject.time_us.median > 0 && other.time_us.median > 0) return other.time_us.median / subject.time_us.median;
  return std::nullopt;
}

}  // namespace

MetricSamples time_samples(const std::vector<const ResultRecord*>& runs) {
  MetricSamples m;
  std::vector<double> medians;
  bool all_have_samples = true;
  for (const auto* r : runs) {
    medians.push_back(r->time_us.median);
    if (r->samples_us.empty()) {
      all_have_samples = false;
      m.samples.push_back(r->time_us.median);
    } else {
      m.samples.insert(m.samples.end(), r->samples_us.begin(), r->samples_us.end());
    }
  }
  m.point = median_of(medians);
  m.kind = all_have_samples ? "per-iteration times" : "run medians";
  return m;
}

std::optional<MetricSamples> speedup_samples(const std::vector<const ResultRecord*>& subject_runs,
                                             const std::vector<const ResultRecord*>& other_runs,
                                             const std::string& other_algo) {
  const size_t pairs = std::min(subject_runs.size(), other_runs.size());
  std::vector<double> points;
  bool paired_iterations = pairs > 0;
  for (size_t k = 0; k < pairs; ++k) {
    const ResultRecord& s = *subject_runs[k];
    const ResultRecord& o = *other_runs[k];
    if (auto v = run_speedup(s, o, other_algo)) points.push_back(*v);
    if (s.samples_us.empty() || s.samples_us.size() != o.samples_us.size()) paired_iterations = false;
  }
  if (points.empty()) return std::nullopt;
  MetricSamples m;
  m.point = median_of(points);
  if (paired_iterations) {
    m.kind = "per-iteration ratios";
    for (size_t k = 0; k < pairs; ++k) {
      const auto& s = subject_runs[k]->samples_us;
      const auto& o = other_runs[k]->samples_us;
      for (size_t i = 0; i < s.size(); ++i)
        if (s[i] > 0) m.samples.push_back(o[i] / s[i]);
    }
  } else {
    m.kind = "run speedups";
    m.samples = points;
  }
  return m;
}

std::optional<double> wire_bytes_point(const std::vector<const ResultRecord*>& runs) {
  std::vector<double> values;
  for (const auto* r : runs)
    if (r->wire_sent_per_rank_max) values.push_back(*r->wire_sent_per_rank_max);
  if (values.empty()) return std::nullopt;
  return median_of(values);
}

}  // namespace omnib
