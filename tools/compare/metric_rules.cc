#include "tools/compare/metric_rules.h"

#include <cstdio>

#include "tools/compare/mann_whitney.h"
#include "tools/compare/metric_samples.h"

namespace omnib {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "PASS";
    case Verdict::kRegression: return "REGRESSION";
    case Verdict::kImproved: return "IMPROVED";
    case Verdict::kNoise: return "NOISE";
  }
  return "?";
}

namespace {

std::vector<const ResultRecord*> runs_of(const ConfigRecords& c, const std::string& algo) {
  std::vector<const ResultRecord*> out;
  auto it = c.by_algo.find(algo);
  if (it == c.by_algo.end()) return out;
  for (const auto& r : it->second)
    if (!r.skipped) out.push_back(&r);
  return out;
}

std::string skip_reason(const ConfigRecords& c, const std::string& algo) {
  auto it = c.by_algo.find(algo);
  if (it == c.by_algo.end() || it->second.empty()) return "not run";
  return "skipped: " + it->second.front().skip_reason;
}

// A test is worth running only when its sample sizes can reach alpha at all.
bool testable(const MetricSamples& base, const MetricSamples& cur, double alpha) {
  return base.samples.size() >= 2 && cur.samples.size() >= 2 &&
         mann_whitney_min_p(base.samples.size(), cur.samples.size()) <= alpha;
}

// Judges a relative change against `tolerance` and, when both sides hold
// enough samples, requires the change to be significant as well.
void judge_change(Comparison& c, const MetricSamples& base, const MetricSamples& cur, bool higher_is_better,
                  double tolerance, double alpha) {
  c.baseline = base.point;
  c.current = cur.point;
  if (!(base.point > 0)) {
    c.note = "baseline value is zero: not comparable";
    return;
  }
  const double r = cur.point / base.point;
  c.ratio = r;
  const bool rose = r > 1 + tolerance;
  const bool fell = r < 1 - tolerance;
  if (!rose && !fell) return;  // PASS
  const bool worse = higher_is_better ? fell : rose;
  c.verdict = worse ? Verdict::kRegression : Verdict::kImproved;
  if (!testable(base, cur, alpha)) return;
  // One-sided, in the direction of the observed change.
  MannWhitneyResult mw = rose ? mann_whitney_greater(cur.samples, base.samples)
                              : mann_whitney_greater(base.samples, cur.samples);
  c.test = SignificanceTest{mw.p_value, mw.u, base.samples.size(), cur.samples.size(), mw.exact, cur.kind};
  if (mw.p_value >= alpha) {
    c.verdict = Verdict::kNoise;
    char buf[96];
    std::snprintf(buf, sizeof(buf), "beyond tolerance but not significant (p=%.3g >= alpha %.3g)", mw.p_value, alpha);
    c.note = buf;
  }
}

Comparison start(const MatchedConfig& config, const std::string& algo, Metric metric) {
  Comparison c;
  c.config_label = config.label;
  c.config_key = config.key;
  c.algo = algo;
  c.metric = metric;
  return c;
}

void judge_bytes(const MatchedConfig& config, const std::string& algo, const std::vector<const ResultRecord*>& base,
                 const std::vector<const ResultRecord*>& cur, const CompareOptions& o, ConfigVerdicts& out) {
  auto b = wire_bytes_point(base);
  auto c = wire_bytes_point(cur);
  if (!b || !c) {
    if (b && !c) out.notes.push_back(algo + ": wire bytes counted in the baseline but not now");
    return;
  }
  Comparison cmp = start(config, algo, Metric::kBytes);
  if (*b == 0 && *c > 0) {
    cmp.current = *c;
    cmp.verdict = Verdict::kRegression;
    cmp.note = "the baseline sent no bytes";
  } else {
    // Deterministic: no significance test, the tolerance alone decides.
    MetricSamples base_m{*b, {}, ""}, cur_m{*c, {}, ""};
    judge_change(cmp, base_m, cur_m, /*higher_is_better=*/false, o.bytes_tolerance, o.alpha);
    if (*b == 0) cmp.note.clear();  // zero on both sides: equal
  }
  out.comparisons.push_back(cmp);
}

void judge_correct(const MatchedConfig& config, const std::string& algo, const std::vector<const ResultRecord*>& base,
                   const std::vector<const ResultRecord*>& cur, ConfigVerdicts& out) {
  auto all_correct = [](const std::vector<const ResultRecord*>& runs) {
    for (const auto* r : runs)
      if (!r->correct) return false;
    return true;
  };
  Comparison cmp = start(config, algo, Metric::kCorrect);
  const bool b = all_correct(base), c = all_correct(cur);
  cmp.baseline = b ? 1 : 0;
  cmp.current = c ? 1 : 0;
  if (b && !c) cmp.verdict = Verdict::kRegression;
  if (!b && c) cmp.verdict = Verdict::kImproved;
  if (!b && !c) cmp.note = "wrong in both files";
  bool checked = false;
  for (const auto* r : cur) checked |= r->checked;
  if (!checked) cmp.note = "current run was not checked (-c 0)";
  out.comparisons.push_back(cmp);
}

void judge_time(const MatchedConfig& config, const std::string& algo, const std::vector<const ResultRecord*>& base,
                const std::vector<const ResultRecord*>& cur, const CompareOptions& o, ConfigVerdicts& out) {
  Comparison cmp = start(config, algo, Metric::kTime);
  judge_change(cmp, time_samples(base), time_samples(cur), /*higher_is_better=*/false, o.tolerance, o.alpha);
  out.comparisons.push_back(cmp);
}

void judge_speedups(const MatchedConfig& config, const std::vector<std::string>& algos, const CompareOptions& o,
                    ConfigVerdicts& out) {
  const auto base_subject = runs_of(config.baseline, o.subject);
  const auto cur_subject = runs_of(config.current, o.subject);
  if (base_subject.empty() || cur_subject.empty()) return;
  for (const auto& other : algos) {
    if (other == o.subject) continue;
    auto base = speedup_samples(base_subject, runs_of(config.baseline, other), other);
    auto cur = speedup_samples(cur_subject, runs_of(config.current, other), other);
    if (!base || !cur) continue;  // the pair did not run together on both sides
    Comparison cmp = start(config, o.subject, Metric::kSpeedup);
    cmp.against = other;
    judge_change(cmp, *base, *cur, /*higher_is_better=*/true, o.tolerance, o.alpha);
    out.comparisons.push_back(cmp);
  }
}

// The subject first, then the others by name: the order of the report.
std::vector<std::string> algorithms_of(const MatchedConfig& config, const std::string& subject) {
  std::vector<std::string> algos;
  auto add = [&](const std::string& a) {
    for (const auto& x : algos)
      if (x == a) return;
    algos.push_back(a);
  };
  if (config.baseline.by_algo.count(subject) || config.current.by_algo.count(subject)) add(subject);
  for (const auto& [a, _] : config.baseline.by_algo) add(a);
  for (const auto& [a, _] : config.current.by_algo) add(a);
  return algos;
}

}  // namespace

ConfigVerdicts judge_configuration(const MatchedConfig& config, const CompareOptions& o) {
  ConfigVerdicts out;
  const auto algos = algorithms_of(config, o.subject);
  for (const auto& algo : algos) {
    const auto base = runs_of(config.baseline, algo);
    const auto cur = runs_of(config.current, algo);
    if (base.empty() || cur.empty()) {
      if (!base.empty())
        out.notes.push_back(algo + ": ran in the baseline, " + skip_reason(config.current, algo) + " now");
      if (!cur.empty())
        out.notes.push_back(algo + ": new (" + skip_reason(config.baseline, algo) + " in the baseline)");
      continue;
    }
    if (o.metrics.count(Metric::kBytes)) judge_bytes(config, algo, base, cur, o, out);
    if (o.metrics.count(Metric::kSpeedup) && algo == o.subject) judge_speedups(config, algos, o, out);
    if (o.metrics.count(Metric::kTime)) judge_time(config, algo, base, cur, o, out);
    if (o.metrics.count(Metric::kCorrect)) judge_correct(config, algo, base, cur, out);
  }
  return out;
}

}  // namespace omnib
