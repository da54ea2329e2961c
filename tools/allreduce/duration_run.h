// --duration in `omni-bench allreduce`: one run of a configuration as
// batches of timed rounds until the run's share of the time is spent. Rank
// 0 sizes each batch (DurationPacer) and every rank learns it before
// starting it, so all make the same calls; after each batch rank 0 folds
// every rank's samples into the tallies and offers them for a checkpoint.
#pragma once

#include <functional>
#include <vector>

#include "engine/base/status.h"
#include "tools/allreduce/call_round.h"
#include "tools/allreduce/rank_records.h"
#include "tools/measure/duration_tally.h"

namespace omnib {

class DurationRun {
 public:
  // Rank 0, after each batch: may write the records so far (a checkpoint).
  using Checkpoint = std::function<Status(const SizeRun&, const std::vector<DurationTally>&)>;

  DurationRun(const RunPlan& plan, CallRound& rounds, const SampleGather& gather, RunResources& resources)
      : plan_(plan), rounds_(rounds), gather_(gather), resources_(resources) {}

  Status run(std::vector<AlgoSlot>& slots, SizeRun& sr, int run, std::vector<DurationTally>& tallies,
             const Checkpoint& checkpoint);

 private:
  const RunPlan& plan_;
  CallRound& rounds_;
  SampleGather gather_;
  RunResources& resources_;
};

}  // namespace omnib
