// The options of `omni-bench simulate`: those of `allreduce` for what the
// run is (sizes, density, block size, workload, overlap, nodes, aggregators,
// algorithms, datatype, encoding, route, -J), --link-rate and --link-delay
// for the simulated links (each way, per link), and the platform's own.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "tools/allreduce/allreduce_options.h"
#include "tools/schedule/message_schedule.h"

namespace omnib {

// Half an hour: a 1024-worker point takes about a minute at the defaults;
// one that runs far past it (a --paced-lanes or --concurrent-flows set
// high) is stopped rather than left to run without end.
inline constexpr int64_t kDefaultPointTimeoutS = 1800;

struct SimulateOptions {
  AllreduceOptions run;
  std::string topology_text = "star";  // tools/simulate/platform_spec.h
  std::string calibration_path;        // empty: factors 1, compute free
  // Flows in flight past which fan-outs are paced (FlowLimits).
  uint64_t concurrent_flows = FlowLimits::kDefaultConcurrentFlows;
  size_t paced_lanes = FlowLimits{}.paced_lanes;
  // The longest one algorithm's simulation at one point may take.
  int64_t point_timeout_s = kDefaultPointTimeoutS;
  // Validation and calibration (simulate_against.h): emulated results to
  // simulate again and compare, and where to write a fitted calibration.
  std::string against;
  std::string calibrate_path;
};

void bind_simulate_options(CLI::App& cmd, SimulateOptions& o);

}  // namespace omnib
