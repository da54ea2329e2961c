#include "tools/simulate/simulation_inputs.h"

#include "tools/allreduce/input_reference.h"

namespace omnib {

SimulationInputs generate_simulation_inputs(const Workload& workload, const RunConfig& config) {
  const size_t count = config.count();
  const size_t bytes = count * dtype_size(config.dtype);
  // prepare_inputs' three tensors: rank 0's copy, the reference sum and
  // the scratch each rank is generated into.
  std::vector<uint8_t> mine(bytes), reference(bytes), scratch(bytes);
  auto view = [&](std::vector<uint8_t>& v) { return TensorView{v.data(), count, config.dtype, DeviceKind::kCpu}; };
  PreparedInputs prepared = prepare_inputs(workload, 0, config.nodes, config.block_size, view(mine), view(reference),
                                           view(scratch), true);
  SimulationInputs in;
  in.stats = prepared.stats;
  in.support = std::move(prepared.support);
  in.cost.nodes = config.nodes;
  in.cost.aggregators = config.aggregators;
  in.cost.count = count;
  in.cost.elem_size = dtype_size(config.dtype);
  in.cost.stats = in.stats;
  in.cost.omni = omni_settings(config);
  in.cost.support = in.support.get();
  return in;
}

}  // namespace omnib
