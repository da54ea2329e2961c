#include "engine/omni/result_shape.h"

#include "engine/blocks/block_scan.h"

namespace omnib {

BatchShape result_shape(const OmniCall& call, const ResultBatch& batch, const uint8_t* sums_at, bool estimate) {
  // The sums are in cache: count their non-zeros.
  BatchShape shape;
  const uint8_t* at = batch.values.data();
  const bool count = call.encoding != EncodingPolicy::kBlocks;
  for (size_t i = 0; i < batch.indices.size(); ++i) {
    const uint64_t b = batch.indices[i];
    const size_t len = call.layout.block_length(b);
    if (sums_at != nullptr) at = sums_at + call.layout.block_begin(b) * call.elem_size;
    uint64_t nonzeros = 0;
    if (!batch.nonzeros.empty())
      nonzeros = batch.nonzeros[i];  // counted as it was summed
    else if (count)
      nonzeros = estimate && batch.estimated_counts[i] != ResultBatch::kUncounted
                     ? batch.estimated_counts[i]
                     : count_nonzero(at, len, call.elem_size);
    shape.add_block(call.layout.block_begin(b), len, nonzeros);
    at += len * call.elem_size;
  }
  return shape;
}

}  // namespace omnib
