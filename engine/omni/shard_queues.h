// The batches a shard holds from each of its workers, in stream order, and
// where each worker's stream stands: the next block it will deliver (its
// look-ahead), and whether that block starts a new batch. ShardAggregator
// sums from here; a batch used up gives its frame and view back as spares
// for the next receive. Not thread-safe (its aggregator serializes calls).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/base/status.h"
#include "engine/omni/block_batch.h"
#include "engine/transport/connection.h"

namespace omnib {

struct PendingBatch {
  Frame frame;
  BatchView view;
  uint32_t cursor = 0;  // the first block not yet summed
};

struct WorkerQueue {
  std::deque<PendingBatch> pending;
  uint64_t next = kEndOfStream;
  bool next_known = false;
  bool started = false;                    // a batch of this call arrived
  bool between_batches = false;            // its last batch was used up; the next block starts a new one
  uint64_t last_announced = kEndOfStream;  // look-ahead of the last batch pushed
};

class ShardQueues {
 public:
  explicit ShardQueues(int workers) : workers_(static_cast<size_t>(workers)) {}

  // Forgets every batch (their frames and views become spares).
  void reset();
  // Takes a batch from `worker`. Fails on a protocol violation: a batch
  // that does not start at the index the previous one announced.
  Status push(int worker, Frame frame, BatchView view);
  // Moves worker w's front batch to block `cursor`, past the batch when
  // that is its end.
  void consume_until(WorkerQueue& w, uint32_t cursor);

  std::vector<WorkerQueue>& workers() { return workers_; }
  const std::vector<WorkerQueue>& workers() const { return workers_; }
  uint64_t pushes() const { return pushes_; }
  uint64_t consumed() const { return consumed_; }

  Frame take_spare_frame();
  void give_spare_frame(Frame frame) { spare_frames_.push_back(std::move(frame)); }
  BatchView take_spare_view();

 private:
  void retire(PendingBatch& p);  // its frame and view become spares

  std::vector<WorkerQueue> workers_;
  std::vector<Frame> spare_frames_;
  std::vector<BatchView> spare_views_;
  uint64_t pushes_ = 0;
  uint64_t consumed_ = 0;
};

}  // namespace omnib
