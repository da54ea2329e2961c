// The aggregation logic of one shard, free of threads and sockets so it can be
// tested on its own. Not thread-safe: the owner serializes calls.
//
// Each worker streams its non-zero blocks of the shard in increasing index,
// every batch announcing the index that follows it (the look-ahead). The next
// block to finish is t = min over workers of next[w]; it needs only the workers
// whose next is t. Their values are summed in rank order (deterministic) and t
// is emitted. Blocks zero on every worker are never seen and never emitted.
// 16-bit float blocks are summed in fp32 and rounded once (engine/reduce_ops.h),
// so a block's sum does not depend on how many workers held it.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/block_layout.h"
#include "engine/encoding_policy.h"
#include "engine/omni/batch_encoding.h"
#include "engine/omni/block_batch.h"
#include "engine/tensor.h"
#include "engine/uninit_buffer.h"
#include "engine/transport/connection.h"

namespace omnib {

// Reduced blocks waiting to be sent, in index order.
struct ResultBatch {
  static constexpr uint32_t kUncounted = ~uint32_t{0};
  std::vector<uint64_t> indices;
  UninitBytes values;
  // Per block, when every worker that held it sent it sparse: the sum of
  // their non-zero counts, at most the block's length (exact for a block one
  // worker held; sums that overlap or cancel make it an upper bound), else
  // kUncounted. Only as exact as the senders' encodings: an estimate for the
  // route choice, never a count to pack by.
  std::vector<uint32_t> estimated_counts;
  // Per block, its sum's non-zero elements, counted where the batch's
  // ResultLimit weighs blocks by a sparse encoding (else empty); `weight`
  // is the blocks' BatchCut::block_weight under that limit's policy.
  std::vector<uint32_t> nonzeros;
  uint64_t weight = 0;
  // Set by a range reduction (advance): every element of blocks
  // [written_from, written_to) of sums_at is written, zeros included.
  // `indices` stays empty. Where asked for (set_range_shapes), range_shapes
  // says what the shards route would have sent of them, for the route
  // choice: per range that the block-by-block rule would have cut (so that
  // it does not depend on which batches had arrived), the union of the
  // holders' blocks, and as non-zeros the holders' counts capped at its
  // elements.
  uint64_t written_from = 0;
  uint64_t written_to = 0;
  std::vector<BatchShape> range_shapes;
  bool is_range() const { return written_to > written_from; }
  void clear() {
    indices.clear();
    values.clear();
    estimated_counts.clear();
    nonzeros.clear();
    weight = 0;
    written_from = written_to = 0;
    range_shapes.clear();
  }
};

// Where advance() ends a result batch: at max_blocks blocks (which bounds a
// result slot's memory), or once its blocks weigh max_weight under `policy`
// (a sparse result's blocks weigh what they cost encoded, so its frame is
// about as long as a whole-block one, not a few hundred bytes).
struct ResultLimit {
  size_t max_blocks = 1;
  uint64_t max_weight = ~uint64_t{0};
  EncodingPolicy policy = EncodingPolicy::kBlocks;  // under kBlocks nothing is counted
};

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
  uint64_t pushes() const { return pushes_; }
  // Counts batches fully consumed: a reader waiting for window space can go on.
  uint64_t consumed() const { return consumed_; }

  // Batches from `worker` not yet fully consumed.
  size_t queued(int worker) const { return workers_[static_cast<size_t>(worker)].pending.size(); }

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
  Frame take_spare_frame();
  void give_spare_frame(Frame frame) { spare_frames_.push_back(std::move(frame)); }
  // A consumed batch's view, whose index and position lists keep their
  // memory for the next decode: a view freed per frame made the allocator
  // hand pages back and fault them in again, call after call.
  BatchView take_spare_view();

 private:
  struct Pending {
    Frame frame;
    BatchView view;
    uint32_t cursor = 0;
  };
  struct WorkerState {
    std::deque<Pending> pending;
    uint64_t next = kEndOfStream;
    bool next_known = false;
    bool started = false;                 // a batch of this collective arrived
    bool between_batches = false;         // its last batch was used up; the next block starts a new one
    uint64_t last_announced = kEndOfStream;  // look-ahead of the last batch pushed
  };

  DType dtype_;
  size_t elem_size_;
  bool wide_;                    // 16-bit floats: sums run in wide_sum_
  std::vector<float> wide_sum_;  // one block's fp32 sum
  BlockLayout layout_{0, 1};
  std::vector<WorkerState> workers_;
  std::vector<Frame> spare_frames_;
  std::vector<BatchView> spare_views_;
  void retire(Pending& p);  // its frame and view become spares
  // advance's range reduction from block t (every holder's front batch is
  // offsets): false, touching nothing, where it does not apply.
  bool range_applies(uint64_t t, const uint8_t* sums_at) const;
  void reduce_range(uint64_t t, ResultBatch& out, uint8_t* sums_at);
  // A worker in a range: its front batch's blocks [block, block_end) and
  // their elements [element, element_end).
  struct RangeHolder {
    WorkerState* w;
    const BatchView* v;
    uint32_t block, block_end;
    uint32_t element, element_end;
  };
  std::vector<RangeHolder> range_holders_;  // reduce_range's, kept between ranges
  std::vector<uint64_t> range_marks_;       // a bit per block of the range: some holder has it
  std::vector<uint32_t> range_cursors_;     // per holder, in range_result_shapes
  bool range_shapes_wanted_ = false;
  // Appends the shapes of the range [t, end)'s results (ResultBatch::range_shapes).
  void range_result_shapes(uint64_t t, uint64_t end, std::vector<BatchShape>& shapes);
  // Moves worker w's front batch to block `cursor`, past the batch when
  // that is its end.
  void consume_until(WorkerState& w, uint32_t cursor);
  uint64_t pushes_ = 0;
  uint64_t consumed_ = 0;
};

}  // namespace omnib
