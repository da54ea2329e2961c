#include "tools/trace/trace_command.h"

#include <cstdio>

#include "tools/trace/trace_file.h"
#include "tools/trace/trace_summary.h"

namespace omnib {

CLI::App* add_trace_command(CLI::App& app, TraceCommandOptions& options) {
  auto* trace = app.add_subcommand("trace", "read trace files written by allreduce --trace (docs/profiling.md)");
  trace->require_subcommand(1);
  options.summarize = trace->add_subcommand(
      "summarize", "the --profile breakdown of every algorithm and size, and the critical path of one call");
  options.summarize->add_option("FILE", options.path, "trace file")->required();
  options.summarize->add_option("--iter", options.iteration,
                                "the timed call whose critical path to show (default: the call of median time)");
  return trace;
}

int run_trace_command(const TraceCommandOptions& options) {
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "omni-bench: %s\n", s.message().c_str());
    return exit_code(s.code());
  };
  if (options.iteration < -1) return fail(usage_error("--iter must be 0 or more"));
  auto doc = read_trace_file(options.path);
  if (!doc.is_ok()) return fail(doc.status());
  std::optional<uint64_t> iteration;
  if (options.iteration >= 0) iteration = static_cast<uint64_t>(options.iteration);
  auto summary = summarize_trace(doc.value(), iteration);
  if (!summary.is_ok()) return fail(summary.status().with_context("'" + options.path + "': "));
  print_trace_summary(stdout, summary.value(), doc.value());
  return 0;
}

}  // namespace omnib
