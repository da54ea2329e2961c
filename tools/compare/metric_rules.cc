#include "tools/compare/metric_rules.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "tools/compare/host_bound_note.h"
#include "tools/compare/mann_whitney.h"
#include "tools/compare/paired_rules.h"

namespace omnib {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "PASS";
    case Verdict::kRegression: return "REGRESSION";
    case Verdict::kImproved: return "IMPROVED";
    case Verdict::kChanged: return "CHANGED";
    case Verdict::kNoise: return "NOISE";
    case Verdict::kUntested: return "UNTESTED";
  }
  return "?";
}

bool verdict_fails(Verdict v) { return v == Verdict::kRegression || v == Verdict::kChanged; }

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

// A test is worth running only when its sample sizes can reach significance
// (p < alpha) at all: 3 runs a side reach exactly 0.05, never below it.
bool testable(const MetricSamples& base, const MetricSamples& cur, double alpha) {
  return base.samples.size() >= 2 && cur.samples.size() >= 2 &&
         mann_whitney_min_p(base.samples.size(), cur.samples.size()) < alpha * (1 - 1e-9);  // min_p is computed in logs
}

// p of "current is worse than baseline".
double p_worse(const std::vector<double>& base, const std::vector<double>& cur, bool higher_is_better) {
  return higher_is_better ? mann_whitney_greater(base, cur).p_value : mann_whitney_greater(cur, base).p_value;
}

// The fewest runs a side whose best outcome is significant at alpha, with
// `fixed` runs on the other side (fixed == 0: the same count on both sides).
size_t runs_needed(size_t fixed, double alpha) {
  size_t n = 2;
  while (n < 1000 && !(mann_whitney_min_p(fixed ? fixed : n, n) < alpha * (1 - 1e-9))) ++n;
  return n;
}

// "cannot judge timing: 1 baseline and 1 current run reach p = 0.5 at best
// (alpha 0.05); needs 4 runs a side (or 20 current runs beside the baseline's 1)"
std::string too_few_runs_note(size_t n_base, size_t n_cur, double alpha) {
  char buf[224];
  int len = std::snprintf(buf, sizeof(buf),
                          "cannot judge timing: %zu baseline and %zu current run%s reach p = %.3g at best (alpha %.3g); "
                          "needs %zu runs a side",
                          n_base, n_cur, n_cur == 1 ? "" : "s", mann_whitney_min_p(n_base, n_cur), alpha,
                          runs_needed(0, alpha));
  const size_t beside = runs_needed(n_base, alpha);
  if (n_base >= 1 && beside != runs_needed(0, alpha) && beside < 1000 && len > 0)
    std::snprintf(buf + len, sizeof(buf) - static_cast<size_t>(len), " (or %zu current runs beside the baseline's %zu)",
                  beside, n_base);
  return buf;
}

// Judges a relative change against `tolerance` and requires it to be
// significant as well; with too few runs for any test, timing is not judged
// (UNTESTED: never a failure, and the note says how many runs it needs).
void judge_change(Comparison& c, const MetricSamples& base, const MetricSamples& cur, bool higher_is_better,
                  double tolerance, const CompareOptions& o) {
  if (o.paired) return judge_paired_change(c, base, cur, higher_is_better, tolerance, o.alpha);
  const double alpha = o.alpha;
  c.baseline = base.point;
  c.current = cur.point;
  c.tolerance = tolerance;
  c.detectable = detectable_regression(base, cur, higher_is_better, tolerance, alpha);
  if (!(base.point > 0)) {
    c.note = "baseline value is zero: not comparable";
    return;
  }
  const double r = cur.point / base.point;
  c.ratio = r;
  if (!testable(base, cur, alpha)) {
    c.verdict = Verdict::kUntested;
    c.note = too_few_runs_note(base.samples.size(), cur.samples.size(), alpha);
    return;
  }
  const bool rose = r > 1 + tolerance;
  const bool fell = r < 1 - tolerance;
  if (!rose && !fell) return;  // PASS
  const bool worse = higher_is_better ? fell : rose;
  c.verdict = worse ? Verdict::kRegression : Verdict::kImproved;
  // One-sided, in the direction of the observed change.
  MannWhitneyResult mw = rose ? mann_whitney_greater(cur.samples, base.samples)
                              : mann_whitney_greater(base.samples, cur.samples);
  c.test = SignificanceTest{false, mw.p_value, mw.u, base.samples.size(), cur.samples.size(), mw.exact, cur.kind};
  if (mw.p_value >= alpha) {
    c.verdict = Verdict::kNoise;
    char buf[96];
    std::snprintf(buf, sizeof(buf), "beyond tolerance but not significant (p=%.3g >= alpha %.3g)", mw.p_value, alpha);
    c.note = buf;
  }
}

// Exact counts: any change beyond `tolerance` (0 by default) is judged.
void judge_exact(Comparison& c, double base, double cur, const CompareOptions& o) {
  c.baseline = base;
  c.current = cur;
  c.tolerance = o.bytes_tolerance;
  c.detectable = o.bytes_tolerance;
  if (base == 0) {
    if (cur > 0) {
      c.verdict = Verdict::kRegression;
      c.note = "the baseline sent nothing";
    }
    return;
  }
  c.ratio = cur / base;
  if (cur == 0) {
    c.verdict = Verdict::kRegression;
    c.note = "fell to zero while the algorithm ran";
  } else if (*c.ratio > 1 + o.bytes_tolerance) {
    c.verdict = Verdict::kRegression;
  } else if (*c.ratio < 1 - o.bytes_tolerance) {
    c.verdict = o.accept_improvements ? Verdict::kImproved : Verdict::kChanged;
    if (!o.accept_improvements)
      c.note = "fewer than the baseline: if intended, pass --accept-improvements or regenerate the baseline";
  }
}

// Appends to a comparison's note ("; " between parts); empty adds nothing.
void add_note(Comparison& c, const std::string& note) {
  if (note.empty()) return;
  c.note = c.note.empty() ? note : c.note + "; " + note;
}

Comparison start(const MatchedConfig& config, const std::string& algo, Metric metric) {
  Comparison c;
  c.config_label = config.label;
  c.config_key = config.key;
  c.algo = algo;
  c.metric = metric;
  return c;
}

void judge_counts(const MatchedConfig& config, const std::string& algo, Metric metric,
                  std::optional<double> base, std::optional<double> cur, const CompareOptions& o,
                  ConfigVerdicts& out) {
  const char* what = metric == Metric::kBytes ? "wire bytes" : "wire frames";
  if (!base || !cur) {
    if (base && !cur) out.failures.push_back(algo + ": " + what + " counted in the baseline but not now");
    return;
  }
  Comparison cmp = start(config, algo, metric);
  judge_exact(cmp, *base, *cur, o);
  out.comparisons.push_back(cmp);
}

void judge_correct(const MatchedConfig& config, const std::string& algo, const std::vector<const ResultRecord*>& base,
                   const std::vector<const ResultRecord*>& cur, ConfigVerdicts& out) {
  auto all_correct = [](const std::vector<const ResultRecord*>& runs) {
    for (const auto* r : runs)
      if (r->correct != true) return false;
    return true;
  };
  auto any_unchecked = [](const std::vector<const ResultRecord*>& runs) {
    for (const auto* r : runs)
      if (!r->checked) return true;
    return false;
  };
  // A simulation moves no values: correctness is no property of it, so a
  // simulated file is judged on its bytes, frames and times alone.
  if (std::all_of(cur.begin(), cur.end(), [](const ResultRecord* r) { return r->simulated; })) return;
  Comparison cmp = start(config, algo, Metric::kCorrect);
  const bool b = all_correct(base), c = all_correct(cur);
  cmp.baseline = b ? 1 : 0;
  cmp.current = c ? 1 : 0;
  if (any_unchecked(cur)) {
    // An unchecked run says nothing about correctness: never a pass.
    cmp.verdict = Verdict::kRegression;
    cmp.note = "not checked now (-c 0): correctness unknown";
  } else if (!c) {
    cmp.verdict = Verdict::kRegression;
  } else if (!b) {
    cmp.verdict = Verdict::kImproved;
    if (any_unchecked(base)) cmp.note = "the baseline was not checked";
  }
  out.comparisons.push_back(cmp);
}

void judge_time(const MatchedConfig& config, const std::string& algo, const std::vector<const ResultRecord*>& base,
                const std::vector<const ResultRecord*>& cur, const CompareOptions& o, ConfigVerdicts& out) {
  Comparison cmp = start(config, algo, Metric::kTime);
  judge_change(cmp, time_samples(base), time_samples(cur), /*higher_is_better=*/false, o.tolerance, o);
  add_note(cmp, host_bound_note(base, cur));
  out.comparisons.push_back(cmp);
}

void judge_cpu(const MatchedConfig& config, const std::string& algo, const std::vector<const ResultRecord*>& base,
               const std::vector<const ResultRecord*>& cur, const CompareOptions& o, ConfigVerdicts& out) {
  std::optional<MetricSamples> b, c;
  if (o.cpu_reference.empty()) {
    b = cpu_samples(base);
    c = cpu_samples(cur);
  } else {
    if (algo == o.cpu_reference) return;  // the unit the others are measured in
    b = cpu_ratio_samples(base, runs_of(config.baseline, o.cpu_reference));
    c = cpu_ratio_samples(cur, runs_of(config.current, o.cpu_reference));
    if (!b || !c) {
      std::string where = " did not run beside it (--cpu-reference)";
      if (b) where = " ran beside it only in the baseline";
      if (c) where = " ran beside it only now";
      out.notes.push_back(algo + ": CPU per byte not compared: " + o.cpu_reference + where);
    }
  }
  if (!b || !c) return;  // no wire bytes counted (Gloo, NCCL): no CPU per byte
  // How far runs of one build fall apart widens the tolerance. Paired runs
  // need no widening: the pairs' own spread is what their test weighs.
  const double spread = std::max(relative_spread(b->samples), relative_spread(c->samples));
  const double cpu_tolerance = o.paired ? o.cpu_tolerance : std::max(o.cpu_tolerance, spread);
  Comparison cmp = start(config, algo, Metric::kCpu);
  cmp.against = o.cpu_reference;
  judge_change(cmp, *b, *c, /*higher_is_better=*/false, cpu_tolerance, o);
  out.comparisons.push_back(cmp);
}

// The dense algorithms of one side other than the subject, with their records.
std::vector<AlgoRecords> dense_of(const ConfigRecords& side, const std::vector<std::string>& algos,
                                  const std::string& subject) {
  std::vector<AlgoRecords> out;
  for (const auto& algo : algos) {
    if (algo == subject) continue;
    auto runs = runs_of(side, algo);
    if (!runs.empty() && runs.front()->dense) out.push_back({algo, std::move(runs)});
  }
  return out;
}

// "ring x3, ps x2": which dense algorithm was fastest, run by run.
std::string fastest_text(const std::vector<std::string>& fastest) {
  std::map<std::string, int> counts;
  for (const auto& a : fastest) ++counts[a];
  std::string out;
  for (const auto& [a, n] : counts) out += (out.empty() ? "" : ", ") + a + " x" + std::to_string(n);
  return out;
}

// The headline rule: the subject's speedup over the fastest dense algorithm
// of each run, whichever that was (it may change between runs and builds).
void judge_best_dense(const MatchedConfig& config, const std::vector<std::string>& algos,
                      const std::vector<const ResultRecord*>& base_subject,
                      const std::vector<const ResultRecord*>& cur_subject, const CompareOptions& o,
                      ConfigVerdicts& out) {
  std::vector<std::string> base_fastest, cur_fastest;
  auto base = best_dense_speedup_samples(base_subject, dense_of(config.baseline, algos, o.subject), &base_fastest);
  auto cur = best_dense_speedup_samples(cur_subject, dense_of(config.current, algos, o.subject), &cur_fastest);
  if (!base || !cur) {
    if (base || cur) out.notes.push_back(o.subject + ": vs best dense only " + (base ? "in the baseline" : "now") +
                                         " (no dense algorithm ran on the other side)");
    return;
  }
  Comparison cmp = start(config, o.subject, Metric::kSpeedup);
  cmp.against = kBestDense;
  judge_change(cmp, *base, *cur, /*higher_is_better=*/true, o.tolerance, o);
  const std::string fastest =
      "fastest dense per run: baseline " + fastest_text(base_fastest) + "; now " + fastest_text(cur_fastest);
  add_note(cmp, fastest);
  add_note(cmp, host_bound_note(base_subject, cur_subject));
  out.comparisons.push_back(cmp);
}

void judge_speedups(const MatchedConfig& config, const std::vector<std::string>& algos, const CompareOptions& o,
                    ConfigVerdicts& out) {
  const auto base_subject = runs_of(config.baseline, o.subject);
  const auto cur_subject = runs_of(config.current, o.subject);
  if (base_subject.empty() || cur_subject.empty()) return;
  judge_best_dense(config, algos, base_subject, cur_subject, o, out);
  for (const auto& other : algos) {
    if (other == o.subject) continue;
    auto base = speedup_samples(base_subject, runs_of(config.baseline, other));
    auto cur = speedup_samples(cur_subject, runs_of(config.current, other));
    if (!base || !cur) continue;  // the pair did not run together on both sides
    Comparison cmp = start(config, o.subject, Metric::kSpeedup);
    cmp.against = other;
    judge_change(cmp, *base, *cur, /*higher_is_better=*/true, o.tolerance, o);
    add_note(cmp, host_bound_note(base_subject, cur_subject));
    out.comparisons.push_back(cmp);
  }
}

// The subject first, then the others by name: the order of the report.
std::vector<std::string> algorithms_of(const MatchedConfig& config, const std::string& subject) {
  std::vector<std::string> algos;
  auto add = [&](const std::string& a) {
    if (std::find(algos.begin(), algos.end(), a) == algos.end()) algos.push_back(a);
  };
  if (config.baseline.by_algo.count(subject) || config.current.by_algo.count(subject)) add(subject);
  for (const auto& [a, _] : config.baseline.by_algo) add(a);
  for (const auto& [a, _] : config.current.by_algo) add(a);
  return algos;
}

}  // namespace

std::optional<double> detectable_regression(const MetricSamples& base, const MetricSamples& cur,
                                            bool higher_is_better, double tolerance, double alpha) {
  if (!testable(base, cur, alpha)) return std::nullopt;  // no test: nothing can be flagged
  if (!(base.point > 0) || !(cur.point > 0)) return std::nullopt;
  // The current runs, moved as a whole to a level `delta` worse than the
  // baseline: is that significant?
  auto significant = [&](double delta) {
    const double level = higher_is_better ? base.point * (1 - delta) : base.point * (1 + delta);
    std::vector<double> moved;
    for (double v : cur.samples) moved.push_back(v * level / cur.point);
    return p_worse(base.samples, moved, higher_is_better) < alpha;
  };
  return smallest_flagged_change(tolerance, higher_is_better ? 0.999 : 100.0, significant);
}

ConfigVerdicts judge_configuration(const MatchedConfig& config, const CompareOptions& o) {
  ConfigVerdicts out;
  const auto algos = algorithms_of(config, o.subject);
  for (const auto& algo : algos) {
    const auto base = runs_of(config.baseline, algo);
    const auto cur = runs_of(config.current, algo);
    if (base.empty() || cur.empty()) {
      if (!base.empty()) out.failures.push_back(algo + ": ran in the baseline, " + skip_reason(config.current, algo) + " now");
      if (!cur.empty()) out.notes.push_back(algo + ": new (" + skip_reason(config.baseline, algo) + " in the baseline)");
      continue;
    }
    if (o.metrics.count(Metric::kBytes))
      judge_counts(config, algo, Metric::kBytes, wire_bytes_point(base), wire_bytes_point(cur), o, out);
    if (o.metrics.count(Metric::kFrames)) {
      const auto b = wire_frames_point(base);
      if (!b && wire_bytes_point(base)) out.notes.push_back(algo + ": the baseline counted no frames (schema 1)");
      else judge_counts(config, algo, Metric::kFrames, b, wire_frames_point(cur), o, out);
    }
    if (o.metrics.count(Metric::kSpeedup) && algo == o.subject) judge_speedups(config, algos, o, out);
    if (o.metrics.count(Metric::kCpu) && o.judges_timing_of(algo)) judge_cpu(config, algo, base, cur, o, out);
    if (o.metrics.count(Metric::kTime) && o.judges_timing_of(algo)) judge_time(config, algo, base, cur, o, out);
    if (o.metrics.count(Metric::kCorrect)) judge_correct(config, algo, base, cur, out);
  }
  return out;
}

}  // namespace omnib
