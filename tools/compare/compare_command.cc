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

// Files of an older schema load with the fields they lack at their defaults;
// the report says which.
std::vector<std::string> schema_notes(const ResultSide& side) {
  std::vector<std::string> notes;
  for (const auto& f : side.files)
    if (!f.defaulted.empty()) {
      std::string fields;
      for (const auto& d : f.defaulted) fields += (fields.empty() ? "" : ", ") + d;
      notes.push_back("'" + f.path + "' has schema_version " + std::to_string(f.schema_version) +
                      "; these fields took their defaults: " + fields);
    }
  return notes;
}

}  // namespace

int run_compare_command(CompareOptions& o) {
  Status valid = validate_compare_options(o);
  if (!valid.is_ok()) return failure(valid);
  auto baseline = load_result_side(o.baseline_path);
  if (!baseline.is_ok()) return failure(baseline.status());
  auto current = load_result_side(o.current_path);
  if (!current.is_ok()) return failure(current.status());
  auto matching = match_configurations(baseline.value(), current.value(), o.min_size);
  if (!matching.is_ok()) return failure(matching.status());
  if (o.paired) {
    Status paired = check_runs_pair_up(matching.value());
    if (!paired.is_ok()) return failure(paired);
  }

  CompareOutcome outcome;
  outcome.only_in_baseline = matching.value().only_in_baseline;
  outcome.only_in_current = matching.value().only_in_current;
  outcome.below_min_size = matching.value().below_min_size;
  outcome.schema_notes = schema_notes(baseline.value());
  for (auto& n : schema_notes(current.value())) outcome.schema_notes.push_back(std::move(n));
  for (const auto& config : matching.value().common) {
    ConfigVerdicts v = judge_configuration(config, o);
    outcome.configs.push_back({config.label, std::move(v.comparisons), std::move(v.failures), std::move(v.notes)});
  }
  print_compare_report(stdout, outcome, o, baseline.value(), current.value());
  std::fflush(stdout);

  if (!o.json_path.empty()) {
    const auto doc = compare_report_json(outcome, o, baseline.value(), current.value());
    Status written = write_file_atomically(o.json_path, doc.dump(2) + "\n");
    if (!written.is_ok()) return failure(written);
  }
  const size_t failed = outcome.failures();
  if (failed > 0) {
    std::fprintf(stderr, "omni-bench compare: %zu failure%s against '%s' (exit 5)\n", failed, failed == 1 ? "" : "s",
                 baseline.value().describe().c_str());
    return exit_code(Code::kRegression);
  }
  return 0;
}

}  // namespace omnib
