#include "tools/compare/signed_rank.h"

#include <algorithm>
#include <cmath>

#include "tools/compare/rank_sum.h"

namespace omnib {
namespace {

// Midranks (1-based) of |d| over the non-zero differences; W+ sums those of
// the positive ones.
RankSum rank_magnitudes(const std::vector<double>& differences, size_t* n) {
  std::vector<std::pair<double, bool>> magnitudes;  // |d|, positive
  for (double d : differences)
    if (d != 0 && !std::isnan(d)) magnitudes.emplace_back(std::abs(d), d > 0);
  *n = magnitudes.size();
  return rank_sum(std::move(magnitudes));
}

// P(W+ >= w) for n untied differences: each rank 1..n is positive with
// probability 1/2, independently. Built rank by rank as probabilities (each
// step halves), so it stays within [0,1] for any n.
double exact_upper_tail(size_t n, double w) {
  const size_t max_sum = n * (n + 1) / 2;
  std::vector<double> dist(max_sum + 1, 0.0);
  dist[0] = 1.0;
  size_t reach = 0;
  for (size_t rank = 1; rank <= n; ++rank) {
    reach += rank;
    // Descending, so that dist[s - rank] still holds the previous rank's value.
    for (size_t s = reach + 1; s-- > 0;) dist[s] = 0.5 * (dist[s] + (s >= rank ? dist[s - rank] : 0.0));
  }
  const auto start = static_cast<size_t>(std::ceil(w));
  double tail = 0;
  for (size_t s = start; s <= max_sum; ++s) tail += dist[s];
  return std::min(1.0, tail);
}

}  // namespace

SignedRankResult signed_rank_greater(const std::vector<double>& differences, SignedRankMethod method) {
  SignedRankResult r;
  const RankSum ranked = rank_magnitudes(differences, &r.n);
  r.w_plus = ranked.flagged;
  if (r.n == 0) return r;
  if (method == SignedRankMethod::kAuto && !ranked.ties && r.n <= kSignedRankExactLimit) {
    r.exact = true;
    r.p_value = exact_upper_tail(r.n, r.w_plus);
    return r;
  }
  const double n = static_cast<double>(r.n);
  const double mean = n * (n + 1) / 4.0;
  const double variance = n * (n + 1) * (2 * n + 1) / 24.0 - ranked.tie_term / 48.0;
  if (variance <= 0) return r;
  // Continuity correction: W+ moves in steps of 1/2 or 1, the normal curve does not.
  r.z = (r.w_plus - mean - 0.5) / std::sqrt(variance);
  r.p_value = 0.5 * std::erfc(r.z / std::sqrt(2.0));
  return r;
}

double signed_rank_min_p(size_t n) { return std::ldexp(1.0, -static_cast<int>(std::min<size_t>(n, 1000))); }

size_t signed_rank_pairs_needed(double alpha) {
  size_t n = 1;
  // min_p is exact (a power of two), but alpha may be given as 1/32 exactly: strictly below.
  while (n < 1000 && !(signed_rank_min_p(n) < alpha)) ++n;
  return n;
}

}  // namespace omnib
