// What rank 0 keeps of one algorithm's --duration run on one configuration,
// batch after batch, in memory that does not grow with the calls: the
// slowest worker's time of every timed call in TimeTallys (over all runs,
// and per run), every rank's counters summed, wrong calls tallied. At any
// point it gives the record's outcome so far (a checkpoint), and at the end
// the final one.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/base/status.h"
#include "tools/measure/rank_samples.h"
#include "tools/record/time_tally.h"

namespace omnib {

// Times a record keeps in samples_us: all of them up to this many, then a
// uniform sample of this many.
inline constexpr size_t kKeptSamples = 10000;

class DurationTally {
 public:
  // `requested_s`: the configuration's share of --duration, all runs.
  DurationTally(const RecordFrame& frame, double requested_s);

  // One batch of run `run`: every rank's samples (index = rank) of the calls
  // since the previous batch, which took `seconds` of rank 0's wall clock.
  // Workers (ranks below frame.nodes) must hold the same number of times;
  // an error (kInternal) names the rank that does not.
  Status fold(int run, const std::vector<RankSamples>& batch, double seconds);

  uint64_t timed_calls() const { return all_.count(); }

  // The outcome so far into `out` (algo, config and the models are the
  // caller's); `complete`: the configuration's calls are all done.
  void fill(bool complete, ResultRecord& out) const;

 private:
  RecordFrame frame_;
  double requested_s_;
  double elapsed_s_ = 0;
  TimeTally all_;
  std::vector<TimeTally> runs_;
  std::vector<RankSamples> totals_;  // per rank: CPU per run, wire and link bytes, calls checked
  WrongTally wrong_;
};

}  // namespace omnib
