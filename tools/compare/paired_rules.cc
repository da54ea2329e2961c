#include "tools/compare/paired_rules.h"

#include <cmath>
#include <cstdio>

#include "tools/compare/signed_rank.h"
#include "tools/stats.h"

namespace omnib {
namespace {

// p of "the current side is worse", from the log ratios.
SignedRankResult test_worse(const std::vector<double>& log_ratios, bool higher_is_better) {
  if (!higher_is_better) return signed_rank_greater(log_ratios);
  std::vector<double> flipped;
  for (double d : log_ratios) flipped.push_back(-d);
  return signed_rank_greater(flipped);
}

}  // namespace

std::vector<double> pair_log_ratios(const MetricSamples& base, const MetricSamples& cur) {
  std::vector<double> out;
  if (base.samples.size() != cur.samples.size()) return out;
  for (size_t i = 0; i < base.samples.size(); ++i)
    if (base.samples[i] > 0 && cur.samples[i] > 0) out.push_back(std::log(cur.samples[i] / base.samples[i]));
  return out;
}

std::string too_few_pairs_note(size_t pairs, double alpha) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "cannot judge timing: %zu pair%s reach%s p = %.3g at best (alpha %.3g); needs %zu pairs",
                pairs, pairs == 1 ? "" : "s", pairs == 1 ? "es" : "", signed_rank_min_p(pairs), alpha,
                signed_rank_pairs_needed(alpha));
  return buf;
}

void judge_paired_change(Comparison& c, const MetricSamples& base, const MetricSamples& cur, bool higher_is_better,
                         double tolerance, double alpha) {
  c.baseline = base.point;
  c.current = cur.point;
  c.tolerance = tolerance;
  const std::vector<double> logs = pair_log_ratios(base, cur);
  if (logs.empty() || logs.size() != base.samples.size()) {
    c.verdict = Verdict::kUntested;
    c.note = "cannot pair: " + std::to_string(base.samples.size()) + " baseline and " +
             std::to_string(cur.samples.size()) + " current values (--paired needs run i of each side beside the other)";
    return;
  }
  const double r = std::exp(median_of(logs));
  c.ratio = r;
  c.detectable = paired_detectable_regression(logs, higher_is_better, tolerance, alpha);
  if (logs.size() < signed_rank_pairs_needed(alpha)) {
    c.verdict = Verdict::kUntested;
    c.note = too_few_pairs_note(logs.size(), alpha);
    return;
  }
  const bool rose = r > 1 + tolerance;
  const bool fell = r < 1 - tolerance;
  if (!rose && !fell) return;  // PASS
  // One-sided, in the direction of the observed change.
  const SignedRankResult sr = test_worse(logs, /*higher_is_better=*/!rose);  // "worse" for a rise is "greater"
  c.test = SignificanceTest{true, sr.p_value, sr.w_plus, logs.size(), logs.size(), sr.exact, "pair ratios of " + cur.kind};
  if (sr.p_value < alpha) {
    const bool worse = higher_is_better ? fell : rose;
    c.verdict = worse ? Verdict::kRegression : Verdict::kImproved;
    return;
  }
  c.verdict = Verdict::kNoise;
  char buf[96];
  std::snprintf(buf, sizeof(buf), "beyond tolerance but not significant (p=%.3g >= alpha %.3g)", sr.p_value, alpha);
  c.note = buf;
}

std::optional<double> paired_detectable_regression(const std::vector<double>& log_ratios, bool higher_is_better,
                                                   double tolerance, double alpha) {
  if (log_ratios.size() < signed_rank_pairs_needed(alpha)) return std::nullopt;
  const double mid = median_of(log_ratios);
  // The pairs moved as a whole to a median `delta` worse: is that significant?
  auto significant = [&](double delta) {
    const double level = std::log(higher_is_better ? 1 - delta : 1 + delta);
    std::vector<double> moved;
    for (double d : log_ratios) moved.push_back(d - mid + level);
    return test_worse(moved, higher_is_better).p_value < alpha;
  };
  return smallest_flagged_change(tolerance, higher_is_better ? 0.999 : 100.0, significant);
}

}  // namespace omnib
