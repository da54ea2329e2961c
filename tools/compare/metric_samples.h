// Point values and repeated samples of a metric, drawn from the records of
// one configuration (one record per run; several when runs were repeated).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/report/result_record.h"

namespace omnib {

struct MetricSamples {
  double point = 0;             // compared against the tolerance
  std::vector<double> samples;  // repeated observations, for the significance test
  std::string kind;             // what the samples are, for the report
};

// Median times: point = median over runs of each run's median; samples = the
// per-iteration times of every run (a run without samples_us adds its median).
MetricSamples time_samples(const std::vector<const ResultRecord*>& runs);

// The subject's speedup over `other_algo`: point = median over runs of
// speedup_vs. Samples are per-iteration ratios other/subject when every
// paired run (k-th subject run with k-th other run) has samples_us of equal
// length, iterations being interleaved within a run; otherwise one speedup
// per run. Absent when the two algorithms never ran together.
std::optional<MetricSamples> speedup_samples(const std::vector<const ResultRecord*>& subject_runs,
                                             const std::vector<const ResultRecord*>& other_runs,
                                             const std::string& other_algo);

// Median of wire bytes per rank over runs that counted them; absent if none did.
std::optional<double> wire_bytes_point(const std::vector<const ResultRecord*>& runs);

}  // namespace omnib
