// A shard's range reduction (ShardAggregator::advance): where every worker
// that holds the next block sent the batch holding it as element offsets,
// the blocks up to the nearest end of those batches (and of the offsets
// batches in hand of workers that do not hold it; or the next block of a
// worker whose batch is not in hand) are summed as one range, straight into
// the tensor: its elements zeroed, then each worker's elements added in rank
// order. The same bits as block by block, without a step per block (at
// block size 1 a block is an element). Where a range ends depends on which
// batches had arrived; its sums and its result shapes do not.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/base/tensor.h"
#include "engine/blocks/block_layout.h"
#include "engine/omni/result_batch.h"
#include "engine/omni/shard_queues.h"

namespace omnib {

class RangeReducer {
 public:
  explicit RangeReducer(DType dtype) : dtype_(dtype), elem_size_(dtype_size(dtype)) {}

  // Whether a range from block t applies: 32-bit types summed in place
  // (`sums_at`), every holder's front batch offsets. Touches nothing.
  bool applies(const ShardQueues& queues, uint64_t t, const uint8_t* sums_at) const;
  // Sums the range from block t into `sums_at` and consumes it from the
  // queues; `out` (empty) gets written_from, written_to and, when
  // `want_shapes`, the range's result shapes (ResultBatch::range_shapes).
  void reduce(ShardQueues& queues, const BlockLayout& layout, uint64_t t, ResultBatch& out, uint8_t* sums_at,
              bool want_shapes);

 private:
  // A worker in the range: its front batch's blocks [block, block_end) and
  // their elements [element, element_end).
  struct Holder {
    WorkerQueue* w;
    const BatchView* v;
    uint32_t block, block_end;
    uint32_t element, element_end;
  };

  // Where the range from t ends, and who takes part in it.
  uint64_t range_end(const ShardQueues& queues, const BlockLayout& layout, uint64_t t) const;
  void collect_holders(ShardQueues& queues, uint64_t t, uint64_t end);
  // Zeroes elements [first, last) of sums_at and adds the holders' elements.
  void sum_elements(uint64_t first, uint64_t last, uint8_t* sums_at);
  // Appends the shapes of the range [t, end)'s results.
  void result_shapes(const BlockLayout& layout, uint64_t t, uint64_t end, std::vector<BatchShape>& shapes);
  // The union of the holders' blocks of [t, end), as bits.
  void mark_union(uint64_t t, uint64_t end);
  uint64_t union_blocks(uint64_t t, uint64_t from, uint64_t to) const;
  // The union's last block in [from, to), which holds from.
  uint64_t last_union_block(uint64_t t, uint64_t from, uint64_t to) const;

  DType dtype_;
  size_t elem_size_;
  // Kept between ranges.
  std::vector<Holder> holders_;
  std::vector<uint64_t> marks_;    // a bit per block of the range: some holder has it
  std::vector<uint32_t> cursors_;  // per holder, in result_shapes
};

}  // namespace omnib
