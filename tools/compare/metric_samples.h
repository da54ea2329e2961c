// The values a metric is judged on, drawn from the records of one
// configuration: one value per whole run (a record of --repeat R holds R
// runs; several records of one algorithm are more runs). Iterations within a
// run share that run's machine load, so they are not independent samples;
// runs are.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/report/result_record.h"

namespace omnib {

struct MetricSamples {
  double point = 0;             // median of the per-run values: compared against the tolerance
  std::vector<double> samples;  // the per-run values, for the significance test and the spread
  std::string kind;             // what the samples are, for the report
};

// Median time of each run.
MetricSamples time_samples(const std::vector<const ResultRecord*>& records);

// The subject's speedup over another algorithm, run by run: the k-th run of
// the k-th subject record against the same run of the k-th other record
// (they ran interleaved). Absent when the two never ran together.
std::optional<MetricSamples> speedup_samples(const std::vector<const ResultRecord*>& subject,
                                             const std::vector<const ResultRecord*>& other);

// One algorithm's records of a configuration, in file order.
struct AlgoRecords {
  std::string algo;
  std::vector<const ResultRecord*> records;
};

// The subject's speedup over the fastest dense algorithm of each run: run i
// of the k-th subject record against the fastest run i among the k-th
// records of the `dense` algorithms (they all ran interleaved). `fastest`
// receives the name of the fastest one of each run, in sample order. Absent
// when no dense algorithm ran with the subject.
std::optional<MetricSamples> best_dense_speedup_samples(const std::vector<const ResultRecord*>& subject,
                                                        const std::vector<AlgoRecords>& dense,
                                                        std::vector<std::string>* fastest);

// CPU time of all ranks per wire byte, run by run; absent when no run counted bytes.
std::optional<MetricSamples> cpu_samples(const std::vector<const ResultRecord*>& records);

// The subject's CPU per wire byte, run by run, over the median of the
// reference's runs on the same side: a machine that is slower at everything,
// another CI host say, cancels out. Absent when either counted no bytes.
std::optional<MetricSamples> cpu_ratio_samples(const std::vector<const ResultRecord*>& subject,
                                               const std::vector<const ResultRecord*>& reference);

// Median over records of wire bytes (or frames) per rank; absent if none counted them.
std::optional<double> wire_bytes_point(const std::vector<const ResultRecord*>& records);
std::optional<double> wire_frames_point(const std::vector<const ResultRecord*>& records);

// The smallest change in [min(tolerance, largest), largest] that `flagged`
// holds for, by bisection (a larger change is flagged if a smaller one is);
// nullopt when not even `largest` is. What `detectable` reports.
std::optional<double> smallest_flagged_change(double tolerance, double largest,
                                              const std::function<bool(double)>& flagged);

// How far apart runs of one build fall, relative to their median:
// kSpreadPerDeviation median absolute deviations over the median.
inline constexpr double kSpreadPerDeviation = 3.5;
double relative_spread(const std::vector<double>& samples);

}  // namespace omnib
