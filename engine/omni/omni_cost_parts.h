// The pieces of omni's wire model (omni_cost.h): how the engine cuts its
// streams, what a batch weighs on the wire, and the two ways of counting a
// route's bytes, from average densities or exactly from every rank's
// non-zeros.
#pragma once

#include "engine/collective/collective.h"
#include "engine/omni/batch_encoding.h"
#include "engine/omni/block_batch.h"
#include "engine/omni/route_choice.h"
#include "engine/omni/stream_tuning.h"
#include "engine/transport/frame_format.h"

namespace omnib {

// What every batch carries besides its blocks: the frame and batch headers.
inline constexpr double kBatchOverheadBytes = sizeof(wire::FrameHeader) + sizeof(BatchHeader);

// How the engine cuts its streams (stream_tuning.h) for this tensor, link
// and route.
BatchCut batch_cut(const CostInputs& c, int shards, EncodingPolicy policy, bool direct);

// A batch's bytes on the wire in the encoding the engine picks for it,
// frame and batch headers included.
double batch_bytes(EncodingPolicy policy, const BatchShape& shape, size_t elem_size);

// A route's bytes and the traffic that picks the next call's route.
struct RouteCost {
  WireCost cost;
  RouteTraffic traffic;
};

// From average densities: every shard gets its even share of each rank's
// blocks, every non-zero block the average count of non-zeros, and streams
// end on full frames.
RouteCost estimated_cost(const CostInputs& c, bool dense, int shards, bool direct);

// Counted block by block from c.support (or every block, `dense`), the way
// the engine cuts its streams (omni_exact_cost.cc).
RouteCost exact_cost(const CostInputs& c, bool dense, int shards, bool direct);

}  // namespace omnib
