// The rules that judge one matched configuration, metric by metric:
// - bytes: wire bytes per rank are deterministic; more than --bytes-tolerance
//   above the baseline is a regression.
// - speedup: the subject's speedup over each other algorithm, measured within
//   one run, so machine speed cancels out; a drop beyond --tolerance is a
//   regression.
// - time: absolute median time, only with --absolute; a rise beyond
//   --tolerance is a regression.
// - correct: correct in the baseline and wrong now is a regression.
// With repeated samples on both sides, a change beyond tolerance must also be
// significant (one-sided Mann-Whitney at --alpha), or it is only NOISE.
#pragma once

#include <string>
#include <vector>

#include "tools/compare/compare_options.h"
#include "tools/compare/comparison.h"
#include "tools/compare/record_matching.h"

namespace omnib {

struct ConfigVerdicts {
  std::vector<Comparison> comparisons;
  std::vector<std::string> notes;  // what could not be compared, and why
};

ConfigVerdicts judge_configuration(const MatchedConfig& config, const CompareOptions& options);

}  // namespace omnib
