#include "tools/compare/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "tools/compare/rank_sum.h"

namespace omnib {
namespace {

// Midranks (1-based) of the pooled samples; the first sample's are summed.
RankSum rank_pooled(const std::vector<double>& first, const std::vector<double>& second) {
  std::vector<std::pair<double, bool>> pooled;  // value, from first
  pooled.reserve(first.size() + second.size());
  for (double v : first) pooled.emplace_back(v, true);
  for (double v : second) pooled.emplace_back(v, false);
  return rank_sum(std::move(pooled));
}

// P(U >= u) under the null hypothesis, from the exact distribution of U for
// samples of n1 and n2 distinct values. Uses the recurrence
// p(i, j, u) = i/(i+j) p(i-1, j, u-j) + j/(i+j) p(i, j-1, u)
// (the largest value belongs to the first sample or to the second), which
// stays within [0,1] and so cannot overflow.
double exact_upper_tail(size_t n1, size_t n2, double u) {
  const size_t max_u = n1 * n2;
  // layer[j][v]: probability that U == v for samples of i and j values.
  std::vector<std::vector<double>> prev(n2 + 1, std::vector<double>(max_u + 1, 0.0));
  for (size_t j = 0; j <= n2; ++j) prev[j][0] = 1.0;  // i == 0: U is always 0
  for (size_t i = 1; i <= n1; ++i) {
    std::vector<std::vector<double>> cur(n2 + 1, std::vector<double>(max_u + 1, 0.0));
    cur[0][0] = 1.0;  // j == 0: U is always 0
    for (size_t j = 1; j <= n2; ++j) {
      const double from_first = static_cast<double>(i) / static_cast<double>(i + j);
      const double from_second = static_cast<double>(j) / static_cast<double>(i + j);
      for (size_t v = 0; v <= i * j; ++v) {
        double p = from_second * cur[j - 1][v];
        if (v >= j) p += from_first * prev[j][v - j];
        cur[j][v] = p;
      }
    }
    prev = std::move(cur);
  }
  const auto start = static_cast<size_t>(std::ceil(u));
  double tail = 0;
  for (size_t v = start; v <= max_u; ++v) tail += prev[n2][v];
  return std::min(1.0, tail);
}

}  // namespace

MannWhitneyResult mann_whitney_greater(const std::vector<double>& larger, const std::vector<double>& smaller,
                                       MannWhitneyMethod method) {
  MannWhitneyResult r;
  const size_t n1 = larger.size(), n2 = smaller.size();
  if (n1 == 0 || n2 == 0) return r;
  const RankSum ranked = rank_pooled(larger, smaller);
  const double a = static_cast<double>(n1), b = static_cast<double>(n2);
  r.u = ranked.flagged - a * (a + 1) / 2.0;

  const bool small = n1 <= kMannWhitneyExactLimit && n2 <= kMannWhitneyExactLimit;
  if (method == MannWhitneyMethod::kAuto && !ranked.ties && small) {
    r.exact = true;
    r.p_value = exact_upper_tail(n1, n2, r.u);
    return r;
  }
  const double n = a + b;
  const double mean = a * b / 2.0;
  const double variance = a * b / 12.0 * ((n + 1) - ranked.tie_term / (n * (n - 1)));
  if (variance <= 0) return r;  // every value tied: no evidence either way
  // Continuity correction: U moves in steps of 1/2 or 1, the normal curve does not.
  r.z = (r.u - mean - 0.5) / std::sqrt(variance);
  r.p_value = 0.5 * std::erfc(r.z / std::sqrt(2.0));
  return r;
}

double mann_whitney_min_p(size_t n1, size_t n2) {
  if (n1 == 0 || n2 == 0) return 1.0;
  // 1 / C(n1+n2, n1), computed in logs to stay finite for large samples.
  const double log_choose = std::lgamma(static_cast<double>(n1 + n2 + 1)) - std::lgamma(static_cast<double>(n1 + 1)) -
                            std::lgamma(static_cast<double>(n2 + 1));
  return std::exp(-log_choose);
}

}  // namespace omnib
