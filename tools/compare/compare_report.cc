#include "tools/compare/compare_report.h"

#include <cmath>
#include <set>

#include "tools/size_parse.h"

namespace omnib {
namespace {

using nlohmann::json;

constexpr size_t kMaxListed = 10;  // unmatched configurations listed before "and N more"
constexpr Verdict kVerdicts[] = {Verdict::kPass,    Verdict::kRegression, Verdict::kImproved,
                                 Verdict::kChanged, Verdict::kNoise,      Verdict::kUntested};

std::string metric_label(const Comparison& c) {
  switch (c.metric) {
    case Metric::kBytes: return "wire bytes/rank";
    case Metric::kFrames: return "wire frames/rank";
    case Metric::kSpeedup: return "speedup vs " + c.against;
    case Metric::kTime: return "median time";
    case Metric::kCpu: return c.against.empty() ? "cpu ns/wire byte" : "cpu/byte over " + c.against + "'s";
    case Metric::kCorrect: return "correct";
  }
  return "?";
}

std::string value_text(const Comparison& c, double v) {
  const Metric m = c.metric;
  char buf[48];
  if (m == Metric::kCpu && !c.against.empty()) {
    std::snprintf(buf, sizeof(buf), "%.3fx", v);
    return buf;
  }
  switch (m) {
    case Metric::kBytes: return format_bytes(v);
    case Metric::kFrames: std::snprintf(buf, sizeof(buf), "%.1f", v); break;
    case Metric::kSpeedup: std::snprintf(buf, sizeof(buf), "%.3fx", v); break;
    case Metric::kTime: std::snprintf(buf, sizeof(buf), "%.1f us", v); break;
    case Metric::kCpu: std::snprintf(buf, sizeof(buf), "%.3f ns", v); break;
    case Metric::kCorrect: return v != 0 ? "yes" : "no";
  }
  return buf;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g%%", fraction * 100);
  return buf;
}

std::string change_text(const Comparison& c) {
  if (!c.ratio) return "";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.2f%%", (*c.ratio - 1) * 100);
  return buf;
}

std::string detail_text(const Comparison& c) {
  std::string out;
  if (c.test) {
    char buf[128];
    if (c.test->paired)
      std::snprintf(buf, sizeof(buf), "p=%.3g (signed-rank %s, %zu %s)", c.test->p_value,
                    c.test->exact ? "exact" : "normal", c.test->n_current, c.test->samples.c_str());
    else
      std::snprintf(buf, sizeof(buf), "p=%.3g (%s, %zu/%zu %s)", c.test->p_value, c.test->exact ? "exact" : "normal",
                    c.test->n_baseline, c.test->n_current, c.test->samples.c_str());
    out = buf;
  }
  if (!c.note.empty() && c.verdict != Verdict::kNoise) out += (out.empty() ? "" : "; ") + c.note;
  return out;
}

// Each file of a side; past kMaxFilesListed (one file per run, as the gate
// writes them), the first and the last, and the revisions of all.
constexpr size_t kMaxFilesListed = 3;

void print_file(std::FILE* out, const char* role, const ResultFile& f) {
  std::fprintf(out, "# %s %s", role, f.path.c_str());
  if (!f.git_revision.empty() || !f.timestamp.empty())
    std::fprintf(out, " (git %s, %s)", f.git_revision.empty() ? "?" : f.git_revision.c_str(),
                 f.timestamp.empty() ? "?" : f.timestamp.c_str());
  std::fprintf(out, "\n");
  if (!f.command_line.empty()) std::fprintf(out, "#   %s\n", f.command_line.c_str());
}

void print_side(std::FILE* out, const char* role, const ResultSide& side) {
  if (side.files.size() <= kMaxFilesListed) {
    for (const auto& f : side.files) print_file(out, role, f);
    return;
  }
  std::set<std::string> revisions;
  for (const auto& f : side.files) revisions.insert(f.git_revision.empty() ? "?" : f.git_revision);
  std::string listed;
  for (const auto& r : revisions) listed += (listed.empty() ? "" : ", ") + r;
  std::fprintf(out, "# %s %zu files, git %s:\n", role, side.files.size(), listed.c_str());
  print_file(out, role, side.files.front());
  std::fprintf(out, "#   ... %zu more\n", side.files.size() - 2);
  print_file(out, role, side.files.back());
}

std::string metric_list(const CompareOptions& o) {
  std::string s;
  for (Metric m : o.metrics) s += (s.empty() ? "" : ",") + std::string(metric_name(m));
  return s;
}

void print_unmatched(std::FILE* out, const char* what, const std::vector<std::string>& labels) {
  for (size_t i = 0; i < labels.size() && i < kMaxListed; ++i) std::fprintf(out, "# %s: %s\n", what, labels[i].c_str());
  if (labels.size() > kMaxListed) std::fprintf(out, "# ... and %zu more\n", labels.size() - kMaxListed);
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json comparison_json(const Comparison& c) {
  json j = {{"configuration", c.config_key},
            {"label", c.config_label},
            {"algo", c.algo},
            {"metric", metric_name(c.metric)},
            {"baseline", c.baseline},
            {"current", c.current},
            {"ratio", optional_json(c.ratio)},
            {"change", c.ratio ? json(*c.ratio - 1) : json(nullptr)},
            {"tolerance", c.tolerance},
            {"detectable", optional_json(c.detectable)},
            {"verdict", verdict_name(c.verdict)}};
  if (!c.against.empty()) j["against"] = c.against;  // speedup: the other; cpu: the reference
  if (c.metric == Metric::kCorrect) {
    j["baseline"] = c.baseline != 0;
    j["current"] = c.current != 0;
  }
  if (c.test && c.test->paired) {
    j["test"] = {{"method", c.test->exact ? "signed-rank exact" : "signed-rank normal"},
                 {"p_value", c.test->p_value},
                 {"w_plus", c.test->u},
                 {"n_pairs", c.test->n_current},
                 {"samples", c.test->samples}};
  } else if (c.test) {
    j["test"] = {{"method", c.test->exact ? "mann-whitney exact" : "mann-whitney normal"},
                 {"p_value", c.test->p_value},
                 {"u", c.test->u},
                 {"n_baseline", c.test->n_baseline},
                 {"n_current", c.test->n_current},
                 {"samples", c.test->samples}};
  } else {
    j["test"] = nullptr;
  }
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

json side_json(const ResultSide& side) {
  json files = json::array();
  for (const auto& f : side.files)
    files.push_back({{"path", f.path}, {"git_revision", f.git_revision}, {"command_line", f.command_line}});
  return files;
}

std::string detectable_text(const MetricSummary& s) {
  if (s.undetectable_any) return "none at all (too few runs, or too scattered)";
  if (!s.detectable) return "-";
  return percent(*s.detectable);
}

}  // namespace

size_t CompareOutcome::count(Verdict v) const {
  size_t n = 0;
  for (const auto& cfg : configs)
    for (const auto& c : cfg.comparisons) n += c.verdict == v;
  return n;
}

size_t CompareOutcome::failures() const {
  size_t n = only_in_baseline.size();
  for (const auto& cfg : configs) {
    n += cfg.failures.size();
    for (const auto& c : cfg.comparisons) n += verdict_fails(c.verdict);
  }
  return n;
}

std::map<Metric, MetricSummary> summarize_metrics(const CompareOutcome& outcome) {
  std::map<Metric, MetricSummary> out;
  std::map<Metric, std::pair<double, size_t>> log_sums;
  for (const auto& cfg : outcome.configs) {
    for (const auto& c : cfg.comparisons) {
      MetricSummary& s = out[c.metric];
      ++s.compared;
      ++s.verdicts[c.verdict];
      if (c.metric != Metric::kCorrect) {
        if (!c.detectable) s.undetectable_any = true;
        else s.detectable = std::max(s.detectable.value_or(0), *c.detectable);
      }
      if (c.ratio && *c.ratio > 0 && std::isfinite(*c.ratio)) {
        log_sums[c.metric].first += std::log(*c.ratio);
        ++log_sums[c.metric].second;
      }
    }
  }
  for (auto& [m, sums] : log_sums)
    if (sums.second) out[m].geomean_ratio = std::exp(sums.first / static_cast<double>(sums.second));
  return out;
}

namespace {

// The rules in force, metric by metric, for the report's header.
std::string rules_text(const CompareOptions& o) {
  std::string s = "metrics " + metric_list(o);
  if (!o.timing_of.empty()) {
    std::string algos;
    for (const auto& a : o.timing_of) algos += (algos.empty() ? "" : ",") + a;
    s += " (time and cpu of " + algos + " only)";
  }
  if (o.metrics.count(Metric::kSpeedup)) s += "; speedup of " + o.subject + " may drop " + percent(o.tolerance);
  if (o.metrics.count(Metric::kTime)) s += "; median time may rise " + percent(o.tolerance);
  if (o.metrics.count(Metric::kCpu))
    s += "; cpu per byte" + (o.cpu_reference.empty() ? "" : " (over " + o.cpu_reference + "'s median on the same side)") +
         " may rise " + percent(o.cpu_tolerance) + (o.paired ? "" : " or the runs' spread");
  if (o.metrics.count(Metric::kBytes) || o.metrics.count(Metric::kFrames))
    s += std::string("; wire bytes and frames ") +
         (o.bytes_tolerance > 0 ? "may change " + percent(o.bytes_tolerance) : "must match exactly") +
         (o.accept_improvements ? " (fewer accepted)" : "");
  char alpha[32];
  std::snprintf(alpha, sizeof(alpha), "%.3g", o.alpha);
  return s + "; significance alpha " + alpha +
         (o.paired ? " on pairs (run i of each side beside the other: Wilcoxon signed-rank on their ratios)"
                   : " on per-run values (Mann-Whitney)");
}

void print_header(std::FILE* out, const CompareOutcome& outcome, const CompareOptions& o, const ResultSide& baseline,
                  const ResultSide& current) {
  std::fprintf(out, "# omni-bench compare%s\n", o.paired ? " --paired" : "");
  print_side(out, "baseline:", baseline);
  print_side(out, "current: ", current);
  std::fprintf(out, "# rules: %s\n", rules_text(o).c_str());
  for (const auto& n : outcome.schema_notes) std::fprintf(out, "# note: %s\n", n.c_str());
  if (o.min_size > 0)
    std::fprintf(out, "# left out: %zu configurations smaller than %s\n", outcome.below_min_size,
                 format_size(o.min_size).c_str());
  print_unmatched(out, "MISSING from the current run (fails)", outcome.only_in_baseline);
  print_unmatched(out, "only in the current run, not compared", outcome.only_in_current);
}

void print_configuration(std::FILE* out, const ConfigOutcome& cfg) {
  std::fprintf(out, "\n## %s\n", cfg.label.c_str());
  std::fprintf(out, "  %-12s %-22s %16s %16s %9s  %-10s %s\n", "algo", "metric", "baseline", "current", "change",
               "verdict", "test / note");
  for (const auto& c : cfg.comparisons) {
    std::fprintf(out, "  %-12s %-22s %16s %16s %9s  ", c.algo.c_str(), metric_label(c).c_str(),
                 value_text(c, c.baseline).c_str(), value_text(c, c.current).c_str(), change_text(c).c_str());
    const std::string detail = detail_text(c);
    if (detail.empty())
      std::fprintf(out, "%s\n", verdict_name(c.verdict));
    else
      std::fprintf(out, "%-10s %s\n", verdict_name(c.verdict), detail.c_str());
  }
  for (const auto& f : cfg.failures) std::fprintf(out, "  FAILED: %s\n", f.c_str());
  for (const auto& n : cfg.notes) std::fprintf(out, "  note: %s\n", n.c_str());
}

void print_summary(std::FILE* out, const CompareOutcome& outcome, bool paired) {
  std::fprintf(out, "\n# summary: geometric mean of current/baseline per metric%s; 'detectable' is the smallest\n"
                    "# regression that would have been flagged in every comparison of the metric\n",
               paired ? " (of the median pair ratios)" : "");
  std::fprintf(out, "  %-8s %9s %6s %11s %9s %8s %6s %9s  %-22s %s\n", "metric", "compared", "pass", "regression",
               "improved", "changed", "noise", "untested", "geomean", "detectable");
  for (const auto& [m, s] : summarize_metrics(outcome)) {
    auto get = [&s = s](Verdict v) {
      auto it = s.verdicts.find(v);
      return it == s.verdicts.end() ? size_t{0} : it->second;
    };
    std::string geo = "-";
    if (s.geomean_ratio) {
      char buf[48];
      std::snprintf(buf, sizeof(buf), "%.4f (%+.2f%%)", *s.geomean_ratio, (*s.geomean_ratio - 1) * 100);
      geo = buf;
    }
    std::fprintf(out, "  %-8s %9zu %6zu %11zu %9zu %8zu %6zu %9zu  %-22s %s\n", metric_name(m), s.compared,
                 get(Verdict::kPass), get(Verdict::kRegression), get(Verdict::kImproved), get(Verdict::kChanged),
                 get(Verdict::kNoise), get(Verdict::kUntested), geo.c_str(),
                 m == Metric::kCorrect ? "-" : detectable_text(s).c_str());
  }
}

// The note of an UNTESTED comparison: how many runs a test needs. The best
// dense speedup's note goes on to name the fastest algorithms: another's, if any.
std::string first_untested_note(const CompareOutcome& outcome) {
  std::string fallback;
  for (const auto& cfg : outcome.configs)
    for (const auto& c : cfg.comparisons) {
      if (c.verdict != Verdict::kUntested) continue;
      if (c.against != kBestDense) return c.note;
      if (fallback.empty()) fallback = c.note;
    }
  return fallback;
}

void print_result(std::FILE* out, const CompareOutcome& outcome) {
  size_t total = 0;
  for (const auto& cfg : outcome.configs) total += cfg.comparisons.size();
  const size_t failures = outcome.failures();
  const size_t untested = outcome.count(Verdict::kUntested);
  if (untested > 0)
    std::fprintf(out, "# timing NOT judged in %zu of %zu comparisons: %s\n", untested, total,
                 first_untested_note(outcome).c_str());
  if (failures == 0) {
    std::fprintf(out, "# result: PASS: no regression in %zu comparisons of %zu configurations%s\n", total,
                 outcome.configs.size(), untested ? " (timing not judged: too few runs)" : "");
    return;
  }
  std::fprintf(out, "# result: FAIL: %zu failure%s:\n", failures, failures == 1 ? "" : "s");
  for (const auto& label : outcome.only_in_baseline) std::fprintf(out, "#   missing: %s\n", label.c_str());
  for (const auto& cfg : outcome.configs) {
    for (const auto& f : cfg.failures) std::fprintf(out, "#   %s | %s\n", cfg.label.c_str(), f.c_str());
    for (const auto& c : cfg.comparisons)
      if (verdict_fails(c.verdict))
        std::fprintf(out, "#   %s | %s %s: %s -> %s %s %s\n", cfg.label.c_str(), c.algo.c_str(),
                     metric_label(c).c_str(), value_text(c, c.baseline).c_str(), value_text(c, c.current).c_str(),
                     change_text(c).c_str(), verdict_name(c.verdict));
  }
}

}  // namespace

void print_compare_report(std::FILE* out, const CompareOutcome& outcome, const CompareOptions& o,
                          const ResultSide& baseline, const ResultSide& current) {
  print_header(out, outcome, o, baseline, current);
  for (const auto& cfg : outcome.configs) print_configuration(out, cfg);
  print_summary(out, outcome, o.paired);
  print_result(out, outcome);
}

json compare_report_json(const CompareOutcome& outcome, const CompareOptions& o, const ResultSide& baseline,
                         const ResultSide& current) {
  json comparisons = json::array();
  json notes = json::array();
  json failures = json::array();
  for (const auto& cfg : outcome.configs) {
    for (const auto& c : cfg.comparisons) comparisons.push_back(comparison_json(c));
    for (const auto& n : cfg.notes) notes.push_back({{"label", cfg.label}, {"note", n}});
    for (const auto& f : cfg.failures) failures.push_back({{"label", cfg.label}, {"failure", f}});
  }
  json summary = json::object();
  for (const auto& [m, s] : summarize_metrics(outcome)) {
    json counts = json::object();
    for (Verdict v : kVerdicts) {
      auto it = s.verdicts.find(v);
      counts[verdict_name(v)] = it == s.verdicts.end() ? 0 : it->second;
    }
    summary[metric_name(m)] = {{"compared", s.compared},
                               {"verdicts", counts},
                               {"geomean_ratio", optional_json(s.geomean_ratio)},
                               {"detectable", s.undetectable_any ? json(nullptr) : optional_json(s.detectable)}};
  }
  json metrics = json::array();
  for (Metric m : o.metrics) metrics.push_back(metric_name(m));
  const size_t failed = outcome.failures();
  return {{"schema_version", kCompareSchemaVersion},
          {"tool", "omni-bench compare"},
          {"baseline", side_json(baseline)},
          {"current", side_json(current)},
          {"rules", {{"metrics", metrics},
                     {"subject", o.subject},
                     {"tolerance", o.tolerance},
                     {"cpu_tolerance", o.cpu_tolerance},
                     {"cpu_reference", o.cpu_reference},
                     {"bytes_tolerance", o.bytes_tolerance},
                     {"accept_improvements", o.accept_improvements},
                     {"alpha", o.alpha},
                     {"absolute", o.absolute},
                     {"paired", o.paired},
                     {"min_size", o.min_size}}},
          {"schema_notes", outcome.schema_notes},
          {"comparisons", comparisons},
          {"failures", failures},
          {"notes", notes},
          {"only_in_baseline", outcome.only_in_baseline},
          {"only_in_current", outcome.only_in_current},
          {"below_min_size", outcome.below_min_size},
          {"summary", summary},
          {"regressions", outcome.count(Verdict::kRegression)},
          {"untested", outcome.count(Verdict::kUntested)},
          {"failed", failed},
          {"verdict", failed ? "FAIL" : "PASS"}};
}

}  // namespace omnib
