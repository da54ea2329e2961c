// What a shard's aggregation emits (shard_aggregator.h): a batch of summed
// blocks, or a range of the tensor summed in place, and where a batch ends.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/base/uninit_buffer.h"
#include "engine/omni/batch_encoding.h"
#include "engine/omni/settings/encoding_policy.h"

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

}  // namespace omnib
