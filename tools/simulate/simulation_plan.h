// What one `omni-bench simulate` run will do, checked before anything is
// simulated: the run as `allreduce` would plan it, the platform, the
// calibration and the flow limits; and the simulation of one configuration's
// algorithms under such a plan. The command, validation against emulated
// runs and the calibration fit all simulate through here.
#pragma once

#include <string>
#include <vector>

#include "engine/base/status.h"
#include "tools/allreduce/run_plan.h"
#include "tools/record/result_record.h"
#include "tools/simulate/calibration.h"
#include "tools/simulate/platform_spec.h"
#include "tools/simulate/simulate_options.h"
#include "tools/simulate/simulation_inputs.h"

namespace omnib {

struct SimulationPlan {
  RunPlan run;
  PlatformSpec platform;
  Calibration calibration;
  FlowLimits flows;
  std::chrono::seconds point_timeout{kDefaultPointTimeoutS};  // per algorithm and point (replay_in_child)
};

// Usage error for what the command line gets wrong (a --net of its own, a
// topology that does not hold the ranks, an unreadable calibration).
Result<SimulationPlan> plan_simulation(const SimulateOptions& o);

// The plan that simulates an emulated measurement's configuration (a
// record of `allreduce --net emulate`) on the star its links made, with
// `algos` and no calibration (the caller sets one).
Result<SimulationPlan> plan_for_emulated(const RunConfig& emulated, const std::vector<std::string>& algos);

// The inputs of configuration k of the plan's run, generated once; every
// algorithm's simulation reads them.
Result<SimulationInputs> plan_inputs(const SimulationPlan& p, const RunConfig& config);

// One algorithm on `config` (the plan's platform and calibration); a
// skipped record for an algorithm without a schedule.
Result<ResultRecord> simulate_algorithm(const SimulationPlan& p, const RunConfig& config,
                                        const SimulationInputs& inputs, const std::string& algo);

// Every algorithm of the plan on `config`, with the speed-ups between them.
Result<std::vector<ResultRecord>> simulate_configuration(const SimulationPlan& p, const RunConfig& config);

}  // namespace omnib
