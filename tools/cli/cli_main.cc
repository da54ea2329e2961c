#include "tools/cli/cli_main.h"

#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/collective/collective.h"
#include "tools/allreduce/allreduce_command.h"
#include "tools/build_info.h"
#include "tools/cli/algorithm_list.h"
#include "tools/cli/introduction.h"
#include "tools/common/option_values.h"
#include "tools/compare/compare_command.h"
#include "tools/git_revision.h"
#include "tools/net/net_command.h"
#include "tools/plot/plot_command.h"
#include "tools/process/library_signals.h"
#include "tools/simulate/simulate_command.h"
#include "tools/sweep/sweep_command.h"
#include "tools/trace/trace_command.h"

namespace omnib {
namespace {

// Every exception that escapes a command is a bug: one line on stderr and
// exit 1 (docs/exit-codes.md), never an abort.
void report_internal_error(const char* what) {
  std::fprintf(stderr, "omni-bench: internal error: %s (please report it with the command line)\n", what);
}

// Exceptions that escape a thread other than main's, or a noexcept function,
// end here instead of in abort().
[[noreturn]] void on_terminate() {
  const char* what = "terminate called without an active exception";
  try {
    if (std::current_exception()) std::rethrow_exception(std::current_exception());
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an exception of unknown type";
  }
  report_internal_error(what);
  std::_Exit(exit_code(Code::kInternal));
}

// Parses argv into `app`: the exit code to end with now (0 after --help or
// --version, or with no arguments at all, after the introduction; 2 for a
// parse error or a value that means nothing), or nullopt to run the command.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  // No arguments: someone new to it. Say what it is and where to start.
  if (argc <= 1) {
    print_introduction(app, stdout);
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    // CLI11 returns 0 for --help/--version; every real parse error is a usage error.
    return code == 0 ? 0 : exit_code(Code::kUsage);
  }
  const Status values = check_option_values(app);
  if (values.is_ok()) return std::nullopt;
  std::fprintf(stderr, "omni-bench: %s\n", values.message().c_str());
  return exit_code(Code::kUsage);
}

// Under `allreduce --help`: what most people run, and what the exit code says.
constexpr const char* kAllreduceExamples = R"(Examples:
  omni-bench allreduce --density 0.1
      4 local ranks, every default algorithm of this build, 32M, a table of 120 columns
  omni-bench allreduce --algo omni,ring --density 0.01 -b 1M -e 64M --net emulate --link-rate 1gbit -J run.json
      omni against ring behind emulated 1 Gbit/s links (root), the results as JSON
  mpirun -np 8 -x MASTER_ADDR -x MASTER_PORT -x OMNIB_JOB_TOKEN omni-bench allreduce --density 0.01
      one job of 8 ranks on the hosts of a launcher (docs/cluster.md)

Exit codes: 0 success, 1 internal error, 2 usage, 3 wrong results, 4 timeout, 5 threshold missed,
6 unavailable, 130/143 interrupted (docs/exit-codes.md).)";

int run_command_line(int argc, char** argv) {
  // Frames and tensors are large and recycled: keep them on the heap instead
  // of mapping and unmapping pages on every allocation.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);

  std::vector<std::string> args(argv, argv + argc);
  CLI::App app{"omni-bench: block-sparse allreduce engine and head-to-head collective benchmark"};
  app.set_version_flag("--version", std::string("omni-bench ") + OMNIB_VERSION + " (" + OMNIB_GIT_REVISION + ")");
  app.require_subcommand(1);

  AllreduceOptions allreduce;
  auto* allreduce_cmd = app.add_subcommand("allreduce", "measure allreduce algorithms on sparse inputs");
  bind_allreduce_options(*allreduce_cmd, allreduce);
  allreduce_cmd->footer(kAllreduceExamples);

  auto* list_cmd =
      app.add_subcommand("list", "the algorithms: family, default set and whether each runs on this build and host");

  SweepOptions sweep;
  auto* sweep_cmd = app.add_subcommand("sweep", "run allreduce over every combination of comma lists into one JSON");
  bind_sweep_options(*sweep_cmd, sweep);

  CompareOptions compare;
  auto* compare_cmd =
      app.add_subcommand("compare", "CI gate: judge a result file against a baseline (exit 5 on regression)");
  bind_compare_options(*compare_cmd, compare);

  NetCommandOptions net;
  auto* net_cmd = add_net_command(app, net);

  TraceCommandOptions trace;
  auto* trace_cmd = add_trace_command(app, trace);

  SimulateOptions simulate;
  auto* simulate_cmd = app.add_subcommand(
      "simulate", "replay allreduce algorithms on a simulated cluster of up to 1024 ranks (SimGrid; docs/simulation.md)");
  bind_simulate_options(*simulate_cmd, simulate);

  PlotOptions plot;
  auto* plot_cmd = app.add_subcommand("plot", "draw PNG and SVG figures from result files (plots/omni_plot.py)");
  bind_plot_options(*plot_cmd, plot);

  if (auto ended = parse_command_line(app, argc, argv)) return *ended;

  if (*list_cmd) return list_algorithms();
  if (*allreduce_cmd) return run_allreduce_command(allreduce, args);
  if (*simulate_cmd) return run_simulate_command(simulate, args);
  if (*sweep_cmd) {
    sweep.passthrough = sweep_cmd->remaining();
    return run_sweep_command(sweep, args);
  }
  if (*net_cmd) return run_net_command(net);
  if (*compare_cmd) return run_compare_command(compare);
  if (*plot_cmd) return run_plot_command(plot);
  if (*trace_cmd) return run_trace_command(trace);
  return exit_code(Code::kUsage);
}

}  // namespace

int run_omni_bench(int argc, char** argv) {
  release_signals_taken_by_libraries();  // Ctrl-C and crashes end as docs/exit-codes.md says
  std::set_terminate(on_terminate);
  try {
    return run_command_line(argc, argv);
  } catch (const std::exception& e) {
    report_internal_error(e.what());
  } catch (...) {
    report_internal_error("an exception of unknown type");
  }
  return exit_code(Code::kInternal);
}

}  // namespace omnib
