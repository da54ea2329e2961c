// `omni-bench plot RESULTS.json [MORE.json...] -o DIR`: draws the figures of
// plots/omni_plot.py from result files. The figures are made by Python and
// matplotlib; this command finds both and runs the script.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace omnib {

struct PlotOptions {
  std::vector<std::string> inputs;  // result files (docs/json-schema.md)
  std::string out_dir;              // where the PNG and SVG files go
};

void bind_plot_options(CLI::App& cmd, PlotOptions& o);

// Returns the process exit code: 0, 2 (missing or unreadable inputs), 6 (no
// Python with matplotlib, or the script is not found), or the script's code.
int run_plot_command(const PlotOptions& o);

}  // namespace omnib
