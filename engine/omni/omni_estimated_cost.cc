#include <algorithm>
#include <cmath>

#include "engine/omni/omni_cost_parts.h"

namespace omnib {

RouteCost estimated_cost(const CostInputs& c, bool dense, int shards, bool direct) {
  const double nb = std::ceil(static_cast<double>(c.count) / static_cast<double>(c.omni.block_size));
  const double d = dense ? 1.0 : c.stats.block_density;
  const double u = dense ? 1.0 : c.stats.union_block_density;
  const EncodingPolicy policy = dense ? EncodingPolicy::kBlocks : c.omni.encoding;
  const BatchCut cut = batch_cut(c, shards, policy, direct);
  const auto full = static_cast<double>(cut.batch_weight);
  const auto groups = static_cast<double>(
      BatchCut::groups_in(static_cast<uint64_t>(std::ceil(nb / static_cast<double>(cut.piece_blocks)))));
  // A stream of k blocks, `fill` of whose elements are non-zero: a batch per
  // full batch's weight, and at least one per group of scan pieces that holds
  // a block (under the sparse policies, per group or quarter batch, whichever
  // is more).
  auto stream = [&](double blocks, double fill) {
    BatchShape shape;
    shape.blocks = static_cast<uint64_t>(std::llround(blocks));
    shape.elements = shape.blocks * c.omni.block_size;
    shape.nonzeros = static_cast<uint64_t>(std::llround(static_cast<double>(shape.elements) * fill));
    shape.bitmap_bytes = shape.blocks * ((c.omni.block_size + 7) / 8);
    shape.span_end = shape.blocks > 0 ? static_cast<uint64_t>(c.count) : 0;  // at most the tensor's pages
    const double weight = blocks * static_cast<double>(BatchCut::block_weight(
                                       policy, c.omni.block_size, std::llround(c.omni.block_size * fill), c.elem_size));
    const double per_piece =
        cut.merge_pieces ? std::min({blocks, groups, std::ceil(weight / (full / 4))}) : std::min(blocks, groups);
    const double frames = std::max({1.0, std::ceil(weight / full), per_piece});
    return batch_bytes(policy, shape, c.elem_size) + (frames - 1) * kBatchOverheadBytes;
  };
  const double fill = dense || d <= 0 ? 1.0 : std::min(1.0, c.stats.element_density / d);
  const double union_fill = dense || u <= 0 ? 1.0 : std::min(1.0, c.stats.union_element_density / u);
  const double shard_blocks = nb / shards;
  const RouteTraffic traffic{static_cast<uint64_t>(c.nodes * shards * stream(d * shard_blocks, fill)),
                             static_cast<uint64_t>(shards * stream(u * shard_blocks, union_fill))};
  if (direct) {
    const double sent = (c.nodes - 1) * stream(d * nb, fill);
    return {{sent, c.nodes * sent, false}, traffic};
  }
  if (c.aggregators == 0) {
    // Ranks 0..shards-1 host the shards in use; a rank's own shard is in memory.
    const double up = stream(d * shard_blocks, fill), down = stream(u * shard_blocks, union_fill);
    const double busiest = std::max(shards * up, (shards - 1) * up + (c.nodes - 1) * down);
    return {{busiest, shards * (c.nodes - 1) * (up + down), false}, traffic};
  }
  const double worker_sent = shards * stream(d * shard_blocks, fill);
  const double aggregator_sent = c.nodes * stream(u * shard_blocks, union_fill);
  return {{std::max(worker_sent, aggregator_sent), c.nodes * worker_sent + shards * aggregator_sent, false}, traffic};
}

}  // namespace omnib
