// How a --duration run paces its timed calls. They go in batches of rounds
// (a round: one call of every algorithm); rank 0 sizes each batch from the
// time left and the pace so far, and every rank learns the size through one
// all-gather in the store before the batch starts, so that all ranks make
// exactly the same calls and stop together. A run makes at least one round
// and overshoots its time by about one round.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/store/store.h"
#include "engine/base/status.h"

namespace omnib {

class DurationPacer {
 public:
  using Clock = std::chrono::steady_clock;
  // Batches stay short enough that checkpoints and the stop come on time,
  // and small enough that what ranks send rank 0 per batch stays small.
  static constexpr uint64_t kMaxBatchRounds = 256;
  static constexpr std::chrono::milliseconds kMaxBatchTime{1000};

  // `budget`: the wall time of this run's timed calls; the clock starts now.
  explicit DurationPacer(std::chrono::nanoseconds budget, Clock::time_point now = Clock::now());

  // Rank 0: the rounds of the next batch, 0 once the budget is spent (never
  // before the first round). Batches start at one round and at most double,
  // so that the pace is learned before a batch is sized by it.
  uint64_t propose(Clock::time_point now = Clock::now());
  uint64_t rounds_done() const { return rounds_; }

 private:
  std::chrono::nanoseconds budget_;
  Clock::time_point start_;
  uint64_t rounds_ = 0;      // proposed so far
  uint64_t last_batch_ = 0;
};

// Every rank of `world` calls it with the same `name` before each batch;
// rank 0's `proposal` is what all of them get back (the others' is ignored).
// Errors: the store's (a rank failed, timeout), kInternal for a malformed value.
Result<uint64_t> agree_on_batch(Store& store, const std::string& name, int rank, int world, uint64_t proposal);

}  // namespace omnib
