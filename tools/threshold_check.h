// Health-check thresholds of `omni-bench allreduce`: --min-busbw and
// --min-speedup. Rank 0 feeds every finished configuration in; after the
// table and JSON are written it prints the rows that missed and the run
// exits 5 (docs/exit-codes.md).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/status.h"
#include "tools/report/result_record.h"

namespace omnib {

// The algorithm whose speedup --min-speedup checks.
inline constexpr const char* kThresholdSubject = "omni";

struct ThresholdOptions {
  double min_busbw_GBps = 0;  // 0: not checked
  double min_speedup = 0;     // 0: not checked
  bool any() const { return min_busbw_GBps > 0 || min_speedup > 0; }
};

void bind_threshold_options(CLI::App& cmd, ThresholdOptions& t);
// Usage error for negative, NaN or infinite values, or --min-speedup without omni and another algorithm.
Status validate_threshold_options(const ThresholdOptions& t, const std::vector<std::string>& algos);

class ThresholdCheck {
 public:
  explicit ThresholdCheck(const ThresholdOptions& t) : t_(t) {}
  // Records the rows of one configuration that miss a threshold.
  void add_group(const std::vector<ResultRecord>& group);
  // Prints the outcome (nothing when no threshold was asked for) and returns
  // the exit code: 0, or 5 when a row missed.
  int report(std::FILE* out) const;

 private:
  ThresholdOptions t_;
  std::vector<std::string> misses_;
  size_t rows_checked_ = 0;
};

}  // namespace omnib
