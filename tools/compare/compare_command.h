// `omni-bench compare BASELINE.json CURRENT.json`: the CI performance gate.
// Matches configurations by their parameters, judges each metric (see
// metric_rules.h), prints the verdicts and optionally writes them as JSON.
#pragma once

#include "tools/compare/compare_options.h"

namespace omnib {

// Returns the process exit code: 0 no regression, 5 a regression, 2 a usage
// error (missing or invalid file, schema mismatch, nothing in common).
int run_compare_command(CompareOptions& options);

}  // namespace omnib
