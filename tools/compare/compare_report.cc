#include "tools/compare/compare_report.h"

#include <cmath>

#include "tools/size_parse.h"

namespace omnib {
namespace {

using nlohmann::json;

constexpr size_t kMaxListed = 10;  // unmatched configurations listed before "and N more"

std::string metric_label(const Comparison& c) {
  switch (c.metric) {
    case Metric::kBytes: return "wire bytes/rank";
    case Metric::kSpeedup: return "speedup vs " + c.against;
    case Metric::kTime: return "median time";
    case Metric::kCorrect: return "correct";
  }
  return "?";
}

std::string value_text(Metric m, double v) {
  char buf[48];
  switch (m) {
    case Metric::kBytes: std::snprintf(buf, sizeof(buf), "%.0f B", v); break;
    case Metric::kSpeedup: std::snprintf(buf, sizeof(buf), "%.3fx", v); break;
    case Metric::kTime: std::snprintf(buf, sizeof(buf), "%.1f us", v); break;
    case Metric::kCorrect: return v != 0 ? "yes" : "no";
  }
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
    char buf[96];
    std::snprintf(buf, sizeof(buf), "p=%.3g (%s, %zu/%zu %s)", c.test->p_value, c.test->exact ? "exact" : "normal",
                  c.test->n_baseline, c.test->n_current, c.test->samples.c_str());
    out = buf;
  }
  if (!c.note.empty() && c.verdict != Verdict::kNoise) out += (out.empty() ? "" : "; ") + c.note;
  return out;
}

void print_file_line(std::FILE* out, const char* role, const ResultFile& f) {
  std::fprintf(out, "# %s %s", role, f.path.c_str());
  if (!f.git_revision.empty() || !f.timestamp.empty())
    std::fprintf(out, " (git %s, %s)", f.git_revision.empty() ? "?" : f.git_revision.c_str(),
                 f.timestamp.empty() ? "?" : f.timestamp.c_str());
  std::fprintf(out, "\n");
  if (!f.command_line.empty()) std::fprintf(out, "#   %s\n", f.command_line.c_str());
}

std::string metric_list(const CompareOptions& o) {
  std::string s;
  for (Metric m : o.metrics) s += (s.empty() ? "" : ",") + std::string(metric_name(m));
  return s;
}

void print_unmatched(std::FILE* out, const char* where, const std::vector<std::string>& labels) {
  for (size_t i = 0; i < labels.size() && i < kMaxListed; ++i)
    std::fprintf(out, "# only in the %s, not compared: %s\n", where, labels[i].c_str());
  if (labels.size() > kMaxListed)
    std::fprintf(out, "# ... and %zu more only in the %s\n", labels.size() - kMaxListed, where);
}

json comparison_json(const Comparison& c) {
  json j = {{"configuration", c.config_key},
            {"label", c.config_label},
            {"algo", c.algo},
            {"metric", metric_name(c.metric)},
            {"baseline", c.baseline},
            {"current", c.current},
            {"ratio", c.ratio ? json(*c.ratio) : json(nullptr)},
            {"change", c.ratio ? json(*c.ratio - 1) : json(nullptr)},
            {"verdict", verdict_name(c.verdict)}};
  if (c.metric == Metric::kSpeedup) j["against"] = c.against;
  if (c.metric == Metric::kCorrect) {
    j["baseline"] = c.baseline != 0;
    j["current"] = c.current != 0;
  }
  if (c.test) {
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

}  // namespace

size_t CompareOutcome::count(Verdict v) const {
  size_t n = 0;
  for (const auto& cfg : configs)
    for (const auto& c : cfg.comparisons) n += c.verdict == v;
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

void print_compare_report(std::FILE* out, const CompareOutcome& outcome, const CompareOptions& o,
                          const ResultFile& baseline, const ResultFile& current) {
  std::fprintf(out, "# omni-bench compare\n");
  print_file_line(out, "baseline:", baseline);
  print_file_line(out, "current: ", current);
  std::fprintf(out,
               "# rules: metrics %s; speedup of %s may drop %.3g%%%s; wire bytes may rise %.3g%%; "
               "significance alpha %.3g where samples repeat\n",
               metric_list(o).c_str(), o.subject.c_str(), o.tolerance * 100,
               o.metrics.count(Metric::kTime) ? ", median time may rise by as much" : "", o.bytes_tolerance * 100,
               o.alpha);
  if (o.min_size > 0)
    std::fprintf(out, "# left out: %zu configurations smaller than %s\n", outcome.below_min_size,
                 format_size(o.min_size).c_str());
  print_unmatched(out, "baseline", outcome.only_in_baseline);
  print_unmatched(out, "current run", outcome.only_in_current);

  for (const auto& cfg : outcome.configs) {
    std::fprintf(out, "\n## %s\n", cfg.label.c_str());
    std::fprintf(out, "  %-12s %-22s %16s %16s %9s  %-10s %s\n", "algo", "metric", "baseline", "current", "change",
                 "verdict", "test / note");
    for (const auto& c : cfg.comparisons) {
      std::fprintf(out, "  %-12s %-22s %16s %16s %9s  ", c.algo.c_str(), metric_label(c).c_str(),
                   value_text(c.metric, c.baseline).c_str(), value_text(c.metric, c.current).c_str(),
                   change_text(c).c_str());
      const std::string detail = detail_text(c);
      if (detail.empty())
        std::fprintf(out, "%s\n", verdict_name(c.verdict));
      else
        std::fprintf(out, "%-10s %s\n", verdict_name(c.verdict), detail.c_str());
    }
    for (const auto& n : cfg.notes) std::fprintf(out, "  note: %s\n", n.c_str());
  }

  std::fprintf(out, "\n# summary: geometric mean of current/baseline per metric\n");
  std::fprintf(out, "  %-10s %9s %6s %11s %9s %6s  %s\n", "metric", "compared", "pass", "regression", "improved",
               "noise", "geomean");
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
    std::fprintf(out, "  %-10s %9zu %6zu %11zu %9zu %6zu  %s\n", metric_name(m), s.compared, get(Verdict::kPass),
                 get(Verdict::kRegression), get(Verdict::kImproved), get(Verdict::kNoise), geo.c_str());
  }

  const size_t regressions = outcome.count(Verdict::kRegression);
  size_t total = 0;
  for (const auto& cfg : outcome.configs) total += cfg.comparisons.size();
  if (regressions == 0) {
    std::fprintf(out, "# result: PASS: no regression in %zu comparisons of %zu configurations\n", total,
                 outcome.configs.size());
    return;
  }
  std::fprintf(out, "# result: REGRESSION: %zu of %zu comparisons regressed:\n", regressions, total);
  for (const auto& cfg : outcome.configs)
    for (const auto& c : cfg.comparisons)
      if (c.verdict == Verdict::kRegression)
        std::fprintf(out, "#   %s | %s %s: %s -> %s %s\n", cfg.label.c_str(), c.algo.c_str(), metric_label(c).c_str(),
                     value_text(c.metric, c.baseline).c_str(), value_text(c.metric, c.current).c_str(),
                     change_text(c).c_str());
}

json compare_report_json(const CompareOutcome& outcome, const CompareOptions& o, const ResultFile& baseline,
                         const ResultFile& current) {
  json comparisons = json::array();
  json notes = json::array();
  for (const auto& cfg : outcome.configs) {
    for (const auto& c : cfg.comparisons) comparisons.push_back(comparison_json(c));
    for (const auto& n : cfg.notes) notes.push_back({{"label", cfg.label}, {"note", n}});
  }
  json summary = json::object();
  for (const auto& [m, s] : summarize_metrics(outcome)) {
    json counts = json::object();
    for (Verdict v : {Verdict::kPass, Verdict::kRegression, Verdict::kImproved, Verdict::kNoise}) {
      auto it = s.verdicts.find(v);
      counts[verdict_name(v)] = it == s.verdicts.end() ? 0 : it->second;
    }
    summary[metric_name(m)] = {{"compared", s.compared},
                               {"verdicts", counts},
                               {"geomean_ratio", s.geomean_ratio ? json(*s.geomean_ratio) : json(nullptr)}};
  }
  json metrics = json::array();
  for (Metric m : o.metrics) metrics.push_back(metric_name(m));
  const size_t regressions = outcome.count(Verdict::kRegression);
  return {{"schema_version", kCompareSchemaVersion},
          {"tool", "omni-bench compare"},
          {"baseline", {{"path", baseline.path}, {"git_revision", baseline.git_revision},
                        {"command_line", baseline.command_line}}},
          {"current", {{"path", current.path}, {"git_revision", current.git_revision},
                       {"command_line", current.command_line}}},
          {"rules", {{"metrics", metrics},
                     {"subject", o.subject},
                     {"tolerance", o.tolerance},
                     {"bytes_tolerance", o.bytes_tolerance},
                     {"alpha", o.alpha},
                     {"absolute", o.absolute},
                     {"min_size", o.min_size}}},
          {"comparisons", comparisons},
          {"notes", notes},
          {"only_in_baseline", outcome.only_in_baseline},
          {"only_in_current", outcome.only_in_current},
          {"below_min_size", outcome.below_min_size},
          {"summary", summary},
          {"regressions", regressions},
          {"verdict", regressions ? "REGRESSION" : "PASS"}};
}

}  // namespace omnib
