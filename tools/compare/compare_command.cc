#include "tools/compare/compare_command.h"

#include <cstdio>

#include "tools/compare/compare_report.h"
#include "tools/compare/metric_rules.h"
#include "tools/compare/record_matching.h"
#include "tools/compare/result_file.h"
#include "tools/report/atomic_file.h"

namespace omnib {
namespace {

int failure(const Status& s) {
  std::fprintf(stderr, "omni-bench compare: %s\n", s.message().c_str());
  return exit_code(s.code());
}

// Records of different schema versions may name or mean fields differently.
Status check_schemas(const ResultFile& baseline, const ResultFile& current) {
  if (baseline.schema_version != current.schema_version)
    return usage_error("'" + baseline.path + "' has schema_version " + std::to_string(baseline.schema_version) +
                       " but '" + current.path + "' has " + std::to_string(current.schema_version) +
                       ": regenerate the baseline with this omni-bench (ci/perf_gate.sh --update)");
  if (baseline.schema_version != kSchemaVersion)
    return usage_error("both files have schema_version " + std::to_string(baseline.schema_version) +
                       " but this omni-bench reads version " + std::to_string(kSchemaVersion) +
                       ": compare them with the omni-bench that wrote them");
  return Status::ok();
}

}  // namespace

int run_compare_command(CompareOptions& o) {
  Status valid = validate_compare_options(o);
  if (!valid.is_ok()) return failure(valid);
  auto baseline = load_result_file(o.baseline_path);
  if (!baseline.is_ok()) return failure(baseline.status());
  auto current = load_result_file(o.current_path);
  if (!current.is_ok()) return failure(current.status());
  Status schemas = check_schemas(baseline.value(), current.value());
  if (!schemas.is_ok()) return failure(schemas);
  auto matching = match_configurations(baseline.value(), current.value(), o.min_size);
  if (!matching.is_ok()) return failure(matching.status());

  CompareOutcome outcome;
  outcome.only_in_baseline = matching.value().only_in_baseline;
  outcome.only_in_current = matching.value().only_in_current;
  outcome.below_min_size = matching.value().below_min_size;
  for (const auto& config : matching.value().common) {
    ConfigVerdicts v = judge_configuration(config, o);
    outcome.configs.push_back({config.label, std::move(v.comparisons), std::move(v.notes)});
  }
  print_compare_report(stdout, outcome, o, baseline.value(), current.value());
  std::fflush(stdout);

  if (!o.json_path.empty()) {
    const auto doc = compare_report_json(outcome, o, baseline.value(), current.value());
    Status written = write_file_atomically(o.json_path, doc.dump(2) + "\n");
    if (!written.is_ok()) return failure(written);
  }
  const size_t regressions = outcome.count(Verdict::kRegression);
  if (regressions > 0) {
    std::fprintf(stderr, "omni-bench compare: %zu regression%s against '%s' (exit 5)\n", regressions,
                 regressions == 1 ? "" : "s", o.baseline_path.c_str());
    return exit_code(Code::kRegression);
  }
  return 0;
}

}  // namespace omnib
