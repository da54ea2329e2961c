// What one `omni-bench allreduce` run will do, checked and derived once from
// the options as typed: the configuration of every size (RunConfig), the
// algorithms, the iteration counts and the inputs' generator. Immutable once
// made; the launcher, every rank, and `sweep` (to know the configurations a
// point will write) all make it with the same function.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/status.h"
#include "tools/allreduce/allreduce_options.h"
#include "tools/config/run_config.h"
#include "tools/config/link_shape.h"
#include "tools/allreduce/threshold_check.h"
#include "tools/allreduce/transport_options.h"
#include "tools/workloads/workload.h"

namespace omnib {

struct RunPlan {
  RunConfig base;               // every identity field but size_bytes
  std::vector<uint64_t> sizes;  // bytes per rank, whole elements, increasing
  std::vector<std::string> algos;
  bool default_algos = false;  // no --algo: default_algos() of the device
  int iters = 20;  // unused under --duration
  // --duration: how long the timed calls of the whole run last (instead of
  // -n), and how often the -J file is rewritten meanwhile.
  std::optional<std::chrono::milliseconds> duration;
  std::chrono::milliseconds checkpoint_interval{60000};
  int warmup = 5;
  int repeat = 1;
  bool check = true;
  int timeout_s = 60;
  std::string json_path;
  bool force = false;
  WorkloadSpec workload;  // the generator, complete (density, block size, seed, nodes, ...)
  ThresholdOptions thresholds;
  bool emulate = false;
  LinkShape link;  // emulate only
  RankTcp tcp;     // emulate only
  TransportChoice transport;  // base.transport names it
  TraceOptions trace;

  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(int64_t{timeout_s} * 1000); }
  int world() const { return base.nodes + base.aggregators; }
  // --duration: the wall time of one run's timed calls at one size (the
  // duration split evenly over sizes and --repeat runs).
  std::chrono::nanoseconds run_budget() const;
  // The configuration measured at sizes[k].
  RunConfig config(size_t k) const;
  // The "configuration" block of a report: the plan as the run understood it.
  nlohmann::json describe() const;
};

// Checks every option and derives the plan. `local_ranks` is how many ranks
// will share this machine's memory; `launched_world` is the world size an
// external or local launcher started (nullopt in the launcher itself). Usage
// errors say what to change.
Result<RunPlan> plan_allreduce(const AllreduceOptions& o, int local_ranks, std::optional<int> launched_world);

}  // namespace omnib
