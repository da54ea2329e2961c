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
constexpr int kCompareSchemaVersion = 3;

struct ConfigOutcome {
  std::string label;
  std::vector<Comparison> comparisons;
  std::vector<std::string> failures;
  std::vector<std::string> notes;
};

struct CompareOutcome {
  std::vector<ConfigOutcome> configs;
  std::vector<std::string> only_in_baseline;  // labels: the current side lacks them (a failure)
  std::vector<std::string> only_in_current;
  size_t below_min_size = 0;
  std::vector<std::string> schema_notes;  // fields an old file lacked and that took defaults

  size_t count(Verdict v) const;
  // Failing verdicts, failures of configurations, and configurations the current side lacks.
  size_t failures() const;
};

// Per metric: how many comparisons had each verdict, the geometric mean of
// current/baseline over those with a ratio, and the largest regression that
// could have gone unflagged (the worst `detectable` over its comparisons).
struct MetricSummary {
  size_t compared = 0;
  std::map<Verdict, size_t> verdicts;
  std::optional<double> geomean_ratio;
  std::optional<double> detectable;  // nullopt with undetectable_any: some regression could not be flagged at all
  bool undetectable_any = false;
};
std::map<Metric, MetricSummary> summarize_metrics(const CompareOutcome& outcome);

void print_compare_report(std::FILE* out, const CompareOutcome& outcome, const CompareOptions& options,
                          const ResultSide& baseline, const ResultSide& current);

nlohmann::json compare_report_json(const CompareOutcome& outcome, const CompareOptions& options,
                                   const ResultSide& baseline, const ResultSide& current);

}  // namespace omnib
