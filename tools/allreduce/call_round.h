// One round of `omni-bench allreduce`'s calls on one rank: every algorithm
// that runs is called once on the same tensors, each call behind a store
// barrier that every rank enters, its output poisoned before and checked
// after (once every rank has left the call); a timed call's time, CPU,
// route and wire bytes go into its slot's samples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/blocks/input_stats.h"
#include "engine/store/store.h"
#include "tools/allreduce/algorithm_slots.h"
#include "tools/allreduce/rank_tensors.h"
#include "tools/allreduce/run_plan.h"
#include "tools/measure/run_resources.h"
#include "tools/net/link_meter.h"
#include "tools/trace/trace_collector.h"

namespace omnib {

// What every call of one configuration works on, and how far it got.
struct SizeRun {
  std::string cfg;  // the configuration's prefix of store names
  const Tensors* t = nullptr;
  const Workload* workload = nullptr;
  RunConfig config;
  InputStats stats;
  uint64_t call = 0;   // calls of each algorithm so far, warm-ups included
  uint64_t round = 0;  // rounds of the current run, warm-ups included
};

class CallRound {
 public:
  // What a round uses; all outlive it. `link_meter`, `retransmit_meter`:
  // --net emulate, else null.
  struct Parts {
    const RunPlan& plan;
    const JobLayout& job;
    Store& store;
    const RankTensors& tensors;
    TraceCollector& tracer;
    LinkMeter* link_meter;
    LinkMeter* retransmit_meter;
    RunResources& resources;
  };
  explicit CallRound(const Parts& parts) : p_(parts) {}

  // Run `run`'s next round; `timed_call` numbers it among the timed ones.
  Status run(std::vector<AlgoSlot>& slots, SizeRun& sr, int run, bool timed, uint64_t timed_call);

 private:
  Status call(AlgoSlot& s, size_t a, SizeRun& sr, int run, bool timed, uint64_t timed_call);

  Parts p_;
};

}  // namespace omnib
