// Judging a timing metric on paired runs (`compare --paired`): run i of the
// baseline and run i of the current side ran in turns on one host
// (ci/perf_gate.sh), so the host's speed and load, shared within a pair,
// cancel in the pair's ratio current / baseline. A change is a regression
// when the median per-pair ratio is worse than the tolerance allows and a
// one-sided Wilcoxon signed-rank test on the log ratios finds it significant
// at alpha. With fewer pairs than any test needs (2^-n >= alpha), timing is
// not judged (UNTESTED), and the note says how many pairs it needs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tools/compare/comparison.h"
#include "tools/compare/metric_samples.h"

namespace omnib {

// log(current_i / baseline_i) for each pair; empty when the sides hold
// different numbers of values (they cannot be paired).
std::vector<double> pair_log_ratios(const MetricSamples& base, const MetricSamples& cur);

// Fills c's values, ratio (the median per-pair ratio), verdict, test and
// detectable.
void judge_paired_change(Comparison& c, const MetricSamples& base, const MetricSamples& cur, bool higher_is_better,
                         double tolerance, double alpha);

// The smallest relative regression (0.25: 25% slower, or a 25% lower
// speedup) the pairs would have flagged: their log ratios, spread kept,
// moved as a whole until the median is beyond `tolerance` and the test
// significant. nullopt with too few pairs, or when no regression of any size
// could be shown.
std::optional<double> paired_detectable_regression(const std::vector<double>& log_ratios, bool higher_is_better,
                                                   double tolerance, double alpha);

// "cannot judge timing: 3 pairs reach p = 0.125 at best (alpha 0.05); needs 5 pairs"
std::string too_few_pairs_note(size_t pairs, double alpha);

}  // namespace omnib
