// The shape of a batch of sums (omni's shard results, or the direct route's
// sums sized as a shard would send them): its blocks and their non-zero
// elements, from which its encoding and size follow (batch_encoding.h).
#pragma once

#include <cstdint>

#include "engine/omni/batch_encoding.h"
#include "engine/omni/omni_call.h"
#include "engine/omni/shard_aggregator.h"

namespace omnib {

// Non-zeros are counted from the sums (a sum can cancel to zero), which are
// in batch.values or, with `sums_at`, at their places from there; or taken
// as counted when summed (ResultBatch::nonzeros). With `estimate`, a block
// takes its holders' counts where it has them (ResultBatch::estimated_counts:
// for the route choice, never for packing). Under the blocks encoding
// nothing is counted.
BatchShape result_shape(const OmniCall& call, const ResultBatch& batch, const uint8_t* sums_at = nullptr,
                        bool estimate = false);

}  // namespace omnib
