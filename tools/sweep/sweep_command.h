// `omni-bench sweep`: runs `allreduce` (or, with --simulate, `simulate`) over
// the cross product of comma lists, relaunching ranks for every point, and
// collects all records in one JSON file that is rewritten atomically after
// every point.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace omnib {

struct SweepOptions {
  std::string densities = "0.1";
  std::string block_sizes;  // default: the engine's block size
  std::string nodes = "4";
  std::string aggregators;  // comma list of counts or "nodes"; empty: colocated
  std::string overlaps = "random";
  std::string workloads = "blocks";
  std::string datatypes = "float";
  std::string encodings;  // empty: allreduce's default
  std::string link_rates;
  std::string net = "loopback";  // emulate: every point on emulated links
  bool simulate = false;         // every point simulated (`omni-bench simulate`), not run
  std::string algos = "omni";
  std::string sizes;  // comma list; overrides -b/-e/-f
  std::string min_bytes = "1M";
  std::string max_bytes = "1M";
  std::string step_factor = "2";
  std::string json_path;
  bool resume = false;
  bool force = false;
  std::vector<std::string> passthrough;  // other allreduce options, given as is
};

void bind_sweep_options(CLI::App& cmd, SweepOptions& o);
// Returns the process exit code: the first failing point's code, 128 + the
// signal when SIGINT or SIGTERM stopped it (the JSON then holds every point
// that finished), 2 for usage errors.
int run_sweep_command(SweepOptions& o, const std::vector<std::string>& argv);

}  // namespace omnib
