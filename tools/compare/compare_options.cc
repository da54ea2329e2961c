#include "tools/compare/compare_options.h"

#include "tools/allreduce_options.h"
#include "tools/report/atomic_file.h"
#include "tools/size_parse.h"

namespace omnib {

const char* metric_name(Metric m) {
  switch (m) {
    case Metric::kBytes: return "bytes";
    case Metric::kFrames: return "frames";
    case Metric::kSpeedup: return "speedup";
    case Metric::kTime: return "time";
    case Metric::kCpu: return "cpu";
    case Metric::kCorrect: return "correct";
  }
  return "?";
}

void bind_compare_options(CLI::App& cmd, CompareOptions& o) {
  cmd.add_option("baseline", o.baseline_path,
                 "result JSON of the reference run (omni-bench allreduce -J), or a comma list of such files")
      ->required();
  cmd.add_option("current", o.current_path, "result JSON of the run to judge, or a comma list of such files")
      ->required();
  cmd.add_option("--tolerance", o.tolerance, "relative drop of speedup (or rise of time) allowed, e.g. 0.10 = 10%")
      ->capture_default_str();
  cmd.add_option("--cpu-tolerance", o.cpu_tolerance,
                 "least relative rise of CPU per wire byte allowed; the spread between runs may widen it")
      ->capture_default_str();
  cmd.add_option("--cpu-reference", o.cpu_reference,
                 "judge CPU per wire byte over the median of this algorithm's runs in the same file (a machine slower at "
                 "everything cancels out), e.g. ring; the reference itself is not judged on CPU");
  cmd.add_option("--bytes-tolerance", o.bytes_tolerance,
                 "relative change of wire bytes and frames allowed (0: exact, as they are for a given seed)")
      ->capture_default_str();
  cmd.add_flag("--accept-improvements", o.accept_improvements,
               "let fewer wire bytes or frames pass as IMPROVED instead of failing as CHANGED");
  cmd.add_option("--alpha", o.alpha,
                 "significance level of the test on per-run values (Mann-Whitney; Wilcoxon signed-rank with --paired)")
      ->capture_default_str();
  cmd.add_flag("--absolute", o.absolute, "also compare absolute median times (noisy on shared machines)");
  cmd.add_flag("--paired", o.paired,
               "the sides ran in turns on one host (ci/perf_gate.sh): run i of the baseline pairs with run i of the "
               "current side, and timing is judged on the per-pair ratios (Wilcoxon signed-rank); times are "
               "compared too");
  cmd.add_option("--subject", o.subject, "algorithm whose speedup over the others is checked")->capture_default_str();
  cmd.add_option("--metric", o.metric_text,
                 "comma list of metrics to compare: bytes, frames, speedup, cpu, time, correct");
  cmd.add_option("--timing-of", o.timing_of_text,
                 "comma list of algorithms whose time and CPU per byte are judged (default: all); bytes, frames and "
                 "correctness are judged for every algorithm, speedups for --subject");
  cmd.add_option("--min-size", o.min_size_text, "ignore configurations smaller than this many bytes (K/M/G suffixes)")
      ->capture_default_str();
  cmd.add_option("--json", o.json_path, "write the verdicts as JSON to this file");
  cmd.add_flag("--force", o.force, "replace the --json file if it exists");
}

Status validate_compare_options(CompareOptions& o) {
  if (!(o.tolerance >= 0 && o.tolerance < 1))
    return usage_error("--tolerance must be in [0,1): a relative change, e.g. 0.10 for 10%");
  if (!(o.bytes_tolerance >= 0 && o.bytes_tolerance < 1))
    return usage_error("--bytes-tolerance must be in [0,1): 0 compares exactly, 0.01 allows 1%");
  if (!(o.cpu_tolerance >= 0 && o.cpu_tolerance < 10))
    return usage_error("--cpu-tolerance must be in [0,10): a relative change, e.g. 0.10 for 10%");
  if (!(o.alpha > 0 && o.alpha < 1)) return usage_error("--alpha must be in (0,1), e.g. 0.05");
  if (o.subject.empty()) return usage_error("--subject is empty: name an algorithm, e.g. omni");
  auto min_size = parse_size(o.min_size_text);
  if (!min_size.is_ok()) return min_size.status().with_context("--min-size: ");
  o.min_size = min_size.value();

  o.timing_of.clear();
  for (const auto& algo : split_list(o.timing_of_text)) o.timing_of.insert(algo);
  if (!o.timing_of_text.empty() && o.timing_of.empty())
    return usage_error("--timing-of is empty: name algorithms, e.g. omni");
  o.metrics.clear();
  if (o.metric_text.empty()) {
    o.metrics = {Metric::kBytes, Metric::kFrames, Metric::kSpeedup, Metric::kCpu, Metric::kCorrect};
    // Paired runs shared one host and its load, so their times compare.
    if (o.absolute || o.paired) o.metrics.insert(Metric::kTime);
  }
  for (const auto& name : split_list(o.metric_text)) {
    if (name == "bytes") {
      o.metrics.insert(Metric::kBytes);
    } else if (name == "frames") {
      o.metrics.insert(Metric::kFrames);
    } else if (name == "cpu") {
      o.metrics.insert(Metric::kCpu);
    } else if (name == "speedup") {
      o.metrics.insert(Metric::kSpeedup);
    } else if (name == "time") {
      if (!o.absolute && !o.paired)
        return usage_error("--metric time compares absolute times, which vary between machines and runs: "
                           "add --absolute to confirm, or --paired for runs made in turns on one host");
      o.metrics.insert(Metric::kTime);
    } else if (name == "correct") {
      o.metrics.insert(Metric::kCorrect);
    } else {
      return usage_error("unknown metric '" + name +
                         "' in --metric: choose from bytes, frames, speedup, cpu, time, correct");
    }
  }
  if (o.metrics.empty())
    return usage_error("--metric is empty: name at least one of bytes, frames, speedup, cpu, time, correct");
  if (!o.json_path.empty()) OMNIB_RETURN_IF_ERROR(check_output_path(o.json_path, o.force, "--force to replace it"));
  return Status::ok();
}

}  // namespace omnib
