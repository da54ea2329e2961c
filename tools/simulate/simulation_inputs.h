// The inputs of one simulated configuration, generated as `allreduce`
// generates them (the workload, rank by rank) but kept only as what the
// schedules need: every rank's non-zeros as bits (InputSupport) and the
// densities, never every rank's tensor (1024 ranks of 16 MiB would be
// 16 GiB; their bits are 512 MiB).
#pragma once

#include <memory>

#include "engine/blocks/input_support.h"
#include "engine/collective/collective.h"
#include "tools/config/run_config.h"
#include "tools/workloads/workload.h"

namespace omnib {

struct SimulationInputs {
  InputStats stats;
  std::unique_ptr<InputSupport> support;
  // What the cost models and schedules take (support points into this).
  CostInputs cost;
};

// The inputs of `config` from `workload` (made for config's nodes).
SimulationInputs generate_simulation_inputs(const Workload& workload, const RunConfig& config);

}  // namespace omnib
