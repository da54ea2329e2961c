// Renders the verdicts of `omni-bench compare`: a table on a stream and a
// JSON document. Nothing here decides a verdict.
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/compare/compare_options.h"
#include "tools/compare/comparison.h"
#include "tools/compare/result_file.h"

namespace omnib {

// Version of the --json verdict document (its own, apart from result files).
constexpr int kCompareSchemaVersion = 1;

struct ConfigOutcome {
  std::string label;
  std::vector<Comparison> comparisons;
  std::vector<std::string> notes;
};

struct CompareOutcome {
  std::vector<ConfigOutcome> configs;
  std::vector<std::string> only_in_baseline;  // labels of configurations not compared
  std::vector<std::string> only_in_current;
  size_t below_min_size = 0;

  size_t count(Verdict v) const;
};

// Per metric: how many comparisons had each verdict, and the geometric mean
// of current/baseline over those with a ratio.
struct MetricSummary {
  size_t compared = 0;
  std::map<Verdict, size_t> verdicts;
  std::optional<double> geomean_ratio;
};
std::map<Metric, MetricSummary> summarize_metrics(const CompareOutcome& outcome);

void print_compare_report(std::FILE* out, const CompareOutcome& outcome, const CompareOptions& options,
                          const ResultFile& baseline, const ResultFile& current);

nlohmann::json compare_report_json(const CompareOutcome& outcome, const CompareOptions& options,
                                   const ResultFile& baseline, const ResultFile& current);

}  // namespace omnib
