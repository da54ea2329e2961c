// `omni-bench simulate --against RESULTS` and `--calibrate FILE`: the
// simulation held against emulated measurements. --against simulates every
// measured configuration again, on the star its emulated links made, and
// prints simulated against measured medians (validation.h); --calibrate
// fits a calibration to such measurements (calibration_fit.h), running a
// small emulated sweep first when no results are given.
#pragma once

#include <string>
#include <vector>

#include "tools/simulate/simulate_options.h"

namespace omnib {

// The exit code: 0 when the comparison was made (whatever it found).
int run_simulate_against(const SimulateOptions& options, const std::vector<std::string>& argv);

// The emulated sweep --calibrate runs when no results are given: omni,
// ring, tree, sparcml-split and allgather at 2 and 4 workers, densities
// 0.01, 0.1 and 1, 4 MiB, 25 and 100 Mbit/s, no link delay (delay needs
// the kernel's sch_netem, which not every host has; give --against runs with
// --link-delay to fit the latency factor) (the `omni-bench sweep`
// arguments, results to `json`).
std::vector<std::string> calibration_sweep_args(const std::string& json);

}  // namespace omnib
