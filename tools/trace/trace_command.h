// `omni-bench trace summarize FILE [--iter N]`: the --profile breakdown and
// the critical path of one call, from a trace written by --trace
// (docs/profiling.md).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace omnib {

struct TraceCommandOptions {
  std::string path;
  int64_t iteration = -1;  // -1: the call of median time
  CLI::App* summarize = nullptr;
};

// Declares `trace` and its subcommands on `app`; returns the `trace` command.
CLI::App* add_trace_command(CLI::App& app, TraceCommandOptions& options);

// Returns the process exit code: 0, or 2 for a file that is missing or not a trace.
int run_trace_command(const TraceCommandOptions& options);

}  // namespace omnib
