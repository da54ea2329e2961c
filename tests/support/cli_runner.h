// Runs the omni-bench binary as a child process for end-to-end tests.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omnib::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
  double seconds = 0;
};

// Runs OMNIB_BINARY with `args`, extra environment `env` ("K=V"), and a hard
// wall-clock limit after which the process group is killed (exit_code -9).
// OMNIB_FLOOR_CACHE is the test's own folder (temp_path("floor-cache"))
// unless `env` sets it.
CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                  int limit_seconds = 120);

// The same with another build of the command line (e.g. the sabotage build).
CliResult run_binary(const std::string& binary, const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {}, int limit_seconds = 120);

// The omni-bench binary run_cli runs.
std::string omni_bench_binary();

// The omni-bench build with deliberately broken algorithms (tests/sabotage/).
std::string sabotage_binary();

// A fresh path in a per-test temporary folder (the file does not exist).
std::string temp_path(const std::string& name);

nlohmann::json read_json(const std::string& path);

// The path of a result file from a quick one-rank run (4K, two calls of
// omni), for tests of the commands that read one.
std::string small_result_file();

// The whole contents of a file ("" when it cannot be read).
std::string slurp(const std::string& path);

}  // namespace omnib::testing
