// The Mann-Whitney U test (Wilcoxon rank-sum), one-sided: does one sample
// tend to hold larger values than another? Rank-based, so it needs no
// assumption about the shape of timing distributions (which are skewed and
// heavy-tailed on shared machines).
#pragma once

#include <cstddef>
#include <vector>

namespace omnib {

// Largest sample size for which the exact distribution is computed.
constexpr size_t kMannWhitneyExactLimit = 50;

struct MannWhitneyResult {
  double u = 0;        // U of `larger`: pairs (a, b) with a > b, ties counting one half
  double z = 0;        // normal-approximation score (0 when the exact test was used)
  double p_value = 1;  // one-sided: P(U >= u) if the samples came from one distribution
  bool exact = false;  // exact distribution (no ties, small samples) or normal approximation
};

enum class MannWhitneyMethod {
  kAuto,    // exact without ties up to kMannWhitneyExactLimit values per sample, else normal
  kNormal,  // normal approximation with tie and continuity corrections
};

// Tests whether `larger` is stochastically greater than `smaller`. An empty
// sample, or all values tied, gives p = 1.
MannWhitneyResult mann_whitney_greater(const std::vector<double>& larger, const std::vector<double>& smaller,
                                       MannWhitneyMethod method = MannWhitneyMethod::kAuto);

// The smallest one-sided p-value any outcome can reach with these sample
// sizes (1 / C(n1+n2, n1)): when it is above alpha the test cannot decide.
double mann_whitney_min_p(size_t n1, size_t n2);

}  // namespace omnib
