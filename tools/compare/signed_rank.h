// The Wilcoxon signed-rank test, one-sided: do paired differences tend to be
// positive? `compare --paired` runs it on the log ratios of runs made in turns
// on one host (run i of the base beside run i of the candidate), so that the
// host's speed and load, shared by the two runs of a pair, cancel. Rank-based:
// no assumption about the shape of timing distributions beyond symmetry of
// the differences under no change.
#pragma once

#include <cstddef>
#include <vector>

namespace omnib {

// Largest number of non-zero differences for which the exact distribution is used.
constexpr size_t kSignedRankExactLimit = 50;

struct SignedRankResult {
  double w_plus = 0;   // sum of the ranks of |d| over the positive differences (midranks on ties)
  double z = 0;        // normal-approximation score (0 when the exact test was used)
  double p_value = 1;  // one-sided: P(W+ >= w_plus) if the differences were symmetric about zero
  size_t n = 0;        // differences used: zeros carry no sign and are dropped (Wilcoxon's rule)
  bool exact = false;  // exact distribution (no ties among |d|, n <= limit) or normal approximation
};

enum class SignedRankMethod {
  kAuto,    // exact without ties up to kSignedRankExactLimit differences, else normal
  kNormal,  // normal approximation with tie and continuity corrections
};

// Tests whether `differences` are stochastically greater than zero. No
// differences, or only zeros, give p = 1.
SignedRankResult signed_rank_greater(const std::vector<double>& differences,
                                     SignedRankMethod method = SignedRankMethod::kAuto);

// The smallest one-sided p any outcome of n pairs can reach: 2^-n (every
// difference positive).
double signed_rank_min_p(size_t n);

// The fewest pairs whose best outcome is significant at `alpha` (2^-n < alpha):
// 5 at 0.05, 7 at 0.01.
size_t signed_rank_pairs_needed(double alpha);

}  // namespace omnib
