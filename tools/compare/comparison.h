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
  kRegression,  // worse beyond tolerance (and significant, when samples allow a test)
  kImproved,    // better beyond tolerance (and significant, when samples allow a test)
  kNoise,       // beyond tolerance, but the samples do not show a significant shift
};

const char* verdict_name(Verdict v);

struct SignificanceTest {
  double p_value = 1;
  double u = 0;
  size_t n_baseline = 0;
  size_t n_current = 0;
  bool exact = false;
  std::string samples;  // what was tested: "per-iteration times", "per-iteration ratios", ...
};

struct Comparison {
  std::string config_label;
  nlohmann::json config_key;
  std::string algo;
  Metric metric = Metric::kBytes;
  std::string against;  // speedup: the other algorithm
  double baseline = 0;  // point values (correct: 1 or 0)
  double current = 0;
  std::optional<double> ratio;  // current / baseline; absent when undefined (correct, zero baseline)
  Verdict verdict = Verdict::kPass;
  std::optional<SignificanceTest> test;
  std::string note;  // why, when the verdict needs explaining
};

}  // namespace omnib
