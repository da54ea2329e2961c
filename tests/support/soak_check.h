// The soak check, shared by the CI soak (tests/soak/) and the tests that
// prove it catches leaks: run `allreduce --duration` with a JSON file, and
// read from it what grew (the verdict of its "resources" block).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"
#include "tools/measure/resources_report.h"

namespace omnib::testing {

struct SoakResult {
  CliResult cli;
  nlohmann::json doc;                       // null when the run wrote no file
  std::optional<ResourcesReport> resources;  // the document's block, read back
  std::vector<std::string> grew;             // the verdict's phrases: empty unless something grew
};

// Runs `binary allreduce <args> -J <temp file>` under `env` within
// `limit_seconds`; test failures are added for a non-zero exit or a file
// without a valid resources block.
SoakResult run_soak(const std::string& binary, const std::vector<std::string>& args,
                    const std::vector<std::string>& env, int limit_seconds);

}  // namespace omnib::testing
