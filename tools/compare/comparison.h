// One judged metric of one algorithm on one configuration: the unit that
// metric_rules produces and compare_report renders.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/compare/compare_options.h"

namespace omnib {

enum class Verdict {
  kPass,        // within tolerance
  kRegression,  // worse beyond tolerance (and significant, when runs allow a test): fails
  kImproved,    // better beyond tolerance (and significant, when runs allow a test)
  kChanged,     // an exact count (bytes, frames) fell: fails unless --accept-improvements
  kNoise,       // beyond tolerance, but the runs do not show a significant shift
  kUntested,    // a timing metric with too few runs (or pairs) for any test: not judged, never fails
};

const char* verdict_name(Verdict v);
// Whether a verdict fails the comparison (exit 5).
bool verdict_fails(Verdict v);

struct SignificanceTest {
  bool paired = false;  // Wilcoxon signed-rank on per-pair log ratios; else Mann-Whitney on the two sides
  double p_value = 1;
  double u = 0;         // Mann-Whitney's U, or the signed-rank W+ when paired
  size_t n_baseline = 0;  // paired: the pairs (both counts)
  size_t n_current = 0;
  bool exact = false;
  std::string samples;  // what was tested: "run medians", "run speedups", ...
};

// Comparison::against of the speedup over the fastest dense algorithm of
// each run (whichever it was).
inline constexpr const char* kBestDense = "best dense";

struct Comparison {
  std::string config_label;
  nlohmann::json config_key;
  std::string algo;
  Metric metric = Metric::kBytes;
  std::string against;  // speedup: the other algorithm, or kBestDense
  double baseline = 0;  // point values (correct: 1 or 0)
  double current = 0;
  std::optional<double> ratio;  // current / baseline (paired: the median per-pair ratio); absent when undefined
  Verdict verdict = Verdict::kPass;
  std::optional<SignificanceTest> test;
  double tolerance = 0;  // the relative change this comparison allowed
  // The smallest relative regression this comparison could have flagged,
  // given the tolerance, the runs on each side and their spread; absent when
  // no change of any size could be shown significant with so few runs.
  std::optional<double> detectable;
  std::string note;  // why, when the verdict needs explaining
};

}  // namespace omnib
