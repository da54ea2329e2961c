#include "engine/omni/omni_call.h"

namespace omnib {

OmniCall plan_omni_call(const OmniCall& fixed, const OmniSettings& settings, int workers, int shards, uint64_t seq,
                        size_t count, bool direct, bool in_place) {
  OmniCall call;
  call.elem_size = fixed.elem_size;
  call.encoding = fixed.encoding;
  call.dense = fixed.dense;
  call.seq = seq;
  call.direct = direct;
  call.in_place = in_place;
  call.layout = BlockLayout(count, settings.block_size);
  const size_t block_bytes = call.block_bytes();
  const uint64_t blocks = call.layout.num_blocks();
  call.active_shards = ShardMap::active_shards(block_bytes, blocks, shards);
  const int streams = direct ? 1 : call.active_shards;  // the direct route streams the whole
                                                        // tensor as one
  call.map = ShardMap(blocks, streams, settings.shard_layout, ShardMap::default_stripe(block_bytes, blocks, streams));
  call.destinations = direct ? shards : call.map.shards();
  // A shard hears from every worker; a worker from every shard in use. The
  // direct route cuts its one stream as a shard's would be cut, from the
  // budget of a link that carries no results.
  const uint64_t rate = settings.link_rate_bps;
  const uint64_t share = static_cast<uint64_t>(count) * call.elem_size / static_cast<uint64_t>(call.active_shards);
  const uint64_t budget = direct ? direct_receive_budget_bytes(rate) : receive_budget_bytes(rate);
  call.to_shards = tune_streams(rate, workers, share, budget);
  call.to_workers = tune_streams(rate, call.active_shards, share, receive_budget_bytes(rate));
  call.cut = BatchCut::for_blocks(block_bytes, call.to_shards.frame_bytes, call.encoding);
  return call;
}

}  // namespace omnib
