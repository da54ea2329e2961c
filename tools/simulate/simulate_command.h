// `omni-bench simulate`: each configuration's algorithms replayed, message
// by message, on a simulated cluster (docs/simulation.md), written as the
// records `allreduce` writes (with "simulated": true), so that plot, compare
// and sweep read them unchanged.
#pragma once

#include <string>
#include <vector>

#include "tools/simulate/simulate_options.h"

namespace omnib {

// The exit code (docs/exit-codes.md); 6 when this build lacks SimGrid.
int run_simulate_command(const SimulateOptions& options, const std::vector<std::string>& argv);

}  // namespace omnib
