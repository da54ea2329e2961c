// One omni call, planned once by OmniCollective::allreduce before its lanes
// start and read (const) by every lane role: the tensor's blocks, how they
// are dealt to shards, how streams are cut and windowed, and the route.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/blocks/block_layout.h"
#include "engine/omni/settings/omni_settings.h"
#include "engine/omni/stream_tuning.h"
#include "engine/blocks/shard_map.h"

namespace omnib {

// The tag of a worker's batches on the direct route (on the shards route, 0):
// a rank that took the other route fails the call instead of summing them.
inline constexpr uint32_t kDirectTag = 1;

struct OmniCall {
  // What the collective fixes for all its calls.
  size_t elem_size = 4;
  EncodingPolicy encoding = EncodingPolicy::kAuto;  // kBlocks for the dense baseline
  bool dense = false;                               // every block is sent, zero or not

  uint64_t seq = 0;  // the call's number, in every frame header
  BlockLayout layout{0, 1};
  ShardMap map;             // on the direct route, one shard: the whole tensor
  int active_shards = 1;    // shards in use (ShardMap::active_shards); the rest sit the call out
  bool direct = false;      // the direct route (every worker sends to every worker)
  bool in_place = false;    // the output is the input
  int destinations = 1;     // where a worker's send lane sends: every rank, or the shards in use
  StreamTuning to_shards;   // worker -> shard streams
  StreamTuning to_workers;  // shard -> worker streams
  BatchCut cut;             // how worker streams and shards' results are cut into batches

  // The stream a worker sends to `shard`: on the direct route every
  // destination gets the one whole-tensor stream, kept in slot 0.
  int stream_of(int shard) const { return direct ? 0 : shard; }
  uint32_t blocks_tag() const { return direct ? kDirectTag : 0; }
  size_t block_bytes() const { return layout.block_size() * elem_size; }
};

// Plans a call of `count` elements on a job of `workers` workers and
// `shards` shards. `fixed` gives the collective's own fields (elem_size,
// encoding, dense), copied into the plan.
OmniCall plan_omni_call(const OmniCall& fixed, const OmniSettings& settings, int workers, int shards, uint64_t seq,
                        size_t count, bool direct, bool in_place);

}  // namespace omnib
