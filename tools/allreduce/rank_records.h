// What rank 0 makes of a configuration's measurements in `omni-bench
// allreduce`: every rank's samples gathered (and started afresh), and one
// record per algorithm with its identity, inputs, analytic wire model,
// outcome, bandwidths and speedups.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/blocks/input_stats.h"
#include "engine/blocks/input_support.h"
#include "engine/collective/collective.h"
#include "engine/store/store.h"
#include "tools/allreduce/algorithm_slots.h"
#include "tools/allreduce/run_plan.h"
#include "tools/measure/rank_samples.h"
#include "tools/measure/run_resources.h"
#include "tools/record/result_record.h"

namespace omnib {

// How a slot's samples combine into its record (RecordFrame of rank_samples.h).
RecordFrame record_frame(const AlgoSlot& slot, const RunConfig& config, const RunPlan& plan, int nodes);

// The records of one configuration, every algorithm's outcome filled by
// `outcome` (skipped algorithms have none); `support`: every rank's
// non-zeros when rank 0 kept them (exact wire models), else null.
std::vector<ResultRecord> build_records(const std::vector<AlgoSlot>& slots, const JobLayout& job,
                                        const RunConfig& config, const InputStats& stats, const InputSupport* support,
                                        const std::function<void(size_t, ResultRecord&)>& outcome);

// Every rank sends rank 0 its slots' samples since the last gather (and
// starts them afresh) with its resources; rank 0 keeps the resources and
// gets the samples as [algorithm][rank], checked to hold `iters` times per
// run and to be within the bounds of a run of `elements` elements that has
// lasted since `started`; the others get nothing.
struct SampleGather {
  Store& store;
  const JobLayout& job;
  int repeat = 1;
  std::chrono::steady_clock::time_point started;
};
Result<std::vector<std::vector<RankSamples>>> gather_samples(const SampleGather& g, std::vector<AlgoSlot>& slots,
                                                             RunResources& resources, const std::string& name,
                                                             int iters, uint64_t elements);

}  // namespace omnib
