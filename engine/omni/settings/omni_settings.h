// The omni engine's own settings (--block-size, --shard-layout, --encoding,
// --route, and the link rate batches are sized from), fixed for the life of
// one collective. They travel to it in CollectiveSetup::omni.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/blocks/block_layout.h"
#include "engine/omni/settings/encoding_policy.h"
#include "engine/omni/settings/route_policy.h"
#include "engine/blocks/shard_map.h"

namespace omnib {

struct OmniSettings {
  size_t block_size = kDefaultBlockSize;  // elements per block
  ShardLayout shard_layout = ShardLayout::kStriped;
  EncodingPolicy encoding = EncodingPolicy::kAuto;
  RoutePolicy route = RoutePolicy::kAuto;
  // Every rank's link rate when known (emulated links), else 0: what batches
  // and windows are sized from (stream_tuning.h).
  uint64_t link_rate_bps = 0;
};

// The environment variable that forces how many lanes the direct route runs
// on: 1 or 2 (unset: chosen from the cores; engine/omni/direct_lanes.h).
inline constexpr const char* kDirectLanesVar = "OMNIB_DIRECT_LANES";

}  // namespace omnib
