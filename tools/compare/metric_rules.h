// The rules that judge one matched configuration, metric by metric:
// - bytes, frames: exact for a given seed. More is a regression; fewer is a
//   change that fails unless --accept-improvements (a regression in the
//   baseline's favour still needs a new baseline); zero while the algorithm
//   ran is always a regression.
// - speedup: the subject's speedup over each other algorithm, run by run
//   (machine speed cancels within a run); a drop beyond --tolerance is a
//   regression.
// - cpu: CPU time of all ranks per wire byte, run by run; a rise beyond the
//   larger of --cpu-tolerance and the spread between runs is a regression.
// - time: absolute median time, only with --absolute.
// - correct: wrong now, or not checked now (-c 0), is a regression.
// A timing change (speedup, cpu, time) beyond tolerance must also be
// significant (one-sided Mann-Whitney on per-run values at --alpha), or it is
// only NOISE; with too few runs for any test it is UNTESTED, never a failure.
// With --paired, run i of each side pairs with run i of the other and the
// test is a Wilcoxon signed-rank test on the pairs' ratios (paired_rules.h).
// Every judged change also says the smallest regression it could have
// flagged (Comparison::detectable).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/compare/compare_options.h"
#include "tools/compare/comparison.h"
#include "tools/compare/metric_samples.h"
#include "tools/compare/record_matching.h"

namespace omnib {

struct ConfigVerdicts {
  std::vector<Comparison> comparisons;
  std::vector<std::string> failures;  // what fails the comparison outside a metric (an algorithm that no longer ran)
  std::vector<std::string> notes;     // what could not be compared, and why
};

ConfigVerdicts judge_configuration(const MatchedConfig& config, const CompareOptions& options);

// The smallest relative regression (e.g. 0.25 for 25%) that would be
// flagged: beyond `tolerance` and significant at `alpha` with the current
// runs' spread kept. nullopt when no regression of any size could be shown
// significant with these runs (too few for a test, or too scattered).
std::optional<double> detectable_regression(const MetricSamples& base, const MetricSamples& cur,
                                            bool higher_is_better, double tolerance, double alpha);

}  // namespace omnib
