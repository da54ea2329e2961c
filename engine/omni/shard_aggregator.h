// The aggregation logic of one shard, free of threads and sockets so it can be
// tested on its own. Not thread-safe: the owner serializes calls.
//
// Each worker streams its non-zero blocks of the shard in increasing index,
// every batch announcing the index that follows it (the look-ahead). The next
// block to finish is t = min over workers of next[w]; it needs only the workers
// whose next is t. Their values are summed in rank order (deterministic) and t
// is emitted. Blocks zero on every worker are never seen and never emitted.
// 16-bit float blocks are summed in fp32 and rounded once (engine/blocks/reduce_ops.h),
// so a block's sum does not depend on how many workers held it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/base/tensor.h"
#include "engine/blocks/block_layout.h"
#include "engine/omni/block_batch.h"
#include "engine/omni/range_reducer.h"
#include "engine/omni/result_batch.h"
#include "engine/omni/shard_queues.h"
#include "engine/transport/connection.h"

namespace omnib {

class ShardAggregator {
 public:
  enum class Progress {
    // `out` holds a batch to send, then call again: a full batch (the
    // ResultLimit), or the blocks before an input batch boundary. Result
    // batches end only at points fixed by the data (never by timing), so a
    // run's frames and wire bytes are exact for a given seed.
    kFlush,
    kNeedInput,  // waiting for a batch from worker *waiting_on; `out` is empty
    kDone,       // every worker's stream ended and everything was emitted
  };

  ShardAggregator(int workers, DType dtype);

  // Starts a new collective over `layout`.
  void reset(const BlockLayout& layout);

  // Takes a batch from `worker`; frames of one worker arrive in stream order.
  // Fails on a protocol violation (a batch that does not start at the index
  // the previous one announced).
  Status push(int worker, Frame frame, BatchView view);

  // Counts push() calls: a waiter can tell that new input arrived.
  uint64_t pushes() const { return queues_.pushes(); }
  // Counts batches fully consumed: a reader waiting for window space can go on.
  uint64_t consumed() const { return queues_.consumed(); }

  // Batches from `worker` not yet fully consumed.
  size_t queued(int worker) const { return queues_.workers()[static_cast<size_t>(worker)].pending.size(); }

  // Emits finished blocks into `out` until it is full (`limit`), the next
  // block starts a new input batch of some worker, input is missing, or the
  // shard is done. With `sums_at`, a block's sum is written at its place in
  // the tensor there (element block_begin(t)) instead of into out.values.
  // There, for 32-bit types, when every worker holding the next block sent
  // the batch that holds it as offsets, the blocks up to the nearest end of
  // those batches (and of the offsets batches in hand of workers that do
  // not hold it; or the next block of a worker whose batch is not) are
  // reduced as one range: out is flushed first, the range's elements are
  // zeroed and each worker's elements added in rank order (the same bits as
  // block by block, without a step per block: at block size 1 a block is an
  // element), and out comes back alone with written_from, written_to and
  // range_shapes set (no block list). Where a range ends depends on which
  // batches had arrived; its sums and range_shapes do not.
  Progress advance(ResultBatch& out, const ResultLimit& limit, int* waiting_on, uint8_t* sums_at = nullptr);

  // Index of the next block this shard will emit, or kEndOfStream.
  uint64_t global_next() const;

  // Whether range reductions fill ResultBatch::range_shapes (only the
  // route choice reads them); off until set.
  void set_range_shapes(bool wanted) { range_shapes_wanted_ = wanted; }

  // A consumed frame whose buffer can be reused for the next receive, and
  // the way back for one that was not used.
  Frame take_spare_frame() { return queues_.take_spare_frame(); }
  void give_spare_frame(Frame frame) { queues_.give_spare_frame(std::move(frame)); }
  // A consumed batch's view, whose index and position lists keep their
  // memory for the next decode: a view freed per frame made the allocator
  // hand pages back and fault them in again, call after call.
  BatchView take_spare_view() { return queues_.take_spare_view(); }

 private:
  // The next block to emit, once every worker's next is known (else
  // kNeedInput, *waiting_on the worker). kFlush: `out` must go first.
  std::optional<Progress> next_block(const ResultBatch& out, int* waiting_on, uint64_t& t) const;
  // Sums block t of every worker that holds it, in rank order, into `out`
  // (or at its place in sums_at).
  void sum_block(uint64_t t, ResultBatch& out, const ResultLimit& limit, uint8_t* sums_at);
  // Adds worker batch p's block (block t, `len` elements) into dst, or into
  // the wide sum, as the `summed`-th holder.
  void add_block(const PendingBatch& p, size_t len, int summed, uint8_t* dst);

  DType dtype_;
  size_t elem_size_;
  bool wide_;                    // 16-bit floats: sums run in wide_sum_
  std::vector<float> wide_sum_;  // one block's fp32 sum
  BlockLayout layout_{0, 1};
  ShardQueues queues_;
  RangeReducer ranges_;
  bool range_shapes_wanted_ = false;
};

}  // namespace omnib
