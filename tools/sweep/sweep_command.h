// `omni-bench sweep`: runs `allreduce` over the cross product of comma lists,
// relaunching ranks for every point, and collects all records in one JSON
// file that is rewritten atomically after every point.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace omnib {

struct SweepOptions {
  std::string densities = "0.1";
  std::string block_sizes = "256";
  std::string nodes = "4";
  std::string aggregators;  // comma list of counts or "nodes"; empty: colocated
  std::string overlaps = "random";
  std::string workloads = "blocks";
  std::string link_rates;
  std::string algos = "omni";
  std::string sizes;  // comma list; overrides -b/-e/-f
  std::string min_bytes = "1M";
  std::string max_bytes = "1M";
  double step_factor = 2;
  std::string json_path;
  bool resume = false;
  bool force = false;
  std::vector<std::string> passthrough;  // other allreduce options, given as is
};

void bind_sweep_options(CLI::App& cmd, SweepOptions& o);
int run_sweep_command(SweepOptions& o, const std::vector<std::string>& argv);

}  // namespace omnib
