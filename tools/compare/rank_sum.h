// What the rank tests (Mann-Whitney, Wilcoxon signed-rank) share: values
// ranked together, ties at their midrank, the ranks of some of them summed,
// and the size of the tie groups for the normal approximation's variance.
#pragma once

#include <utility>
#include <vector>

namespace omnib {

struct RankSum {
  double flagged = 0;   // sum of the midranks (1-based) of the flagged values
  double tie_term = 0;  // sum over groups of equal values of t^3 - t
  bool ties = false;
};

// `values`: each value and whether it counts in the sum.
RankSum rank_sum(std::vector<std::pair<double, bool>> values);

}  // namespace omnib
