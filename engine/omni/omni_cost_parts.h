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

// Told of every batch exact_cost counts, in the order the walk closes them:
// each worker's streams (worker by worker), then each shard's result stream.
// Blocks are the batch's first and last (an empty batch, which only ends a
// stream, has first > last). `bytes` include the frame and batch headers. On
// the direct route the one "shard" is 0 and its stream goes to every other
// worker; there are no result batches. A simulator replays these.
class BatchVisitor {
 public:
  virtual ~BatchVisitor() = default;
  virtual void input_batch(int worker, int shard, double bytes, uint64_t first, uint64_t last) = 0;
  virtual void result_batch(int shard, double bytes, uint64_t first, uint64_t last) = 0;
};
RouteCost exact_cost(const CostInputs& c, bool dense, int shards, bool direct, BatchVisitor* visitor);

}  // namespace omnib
