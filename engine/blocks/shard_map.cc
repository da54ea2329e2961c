#include "engine/blocks/shard_map.h"

#include <algorithm>

namespace omnib {

const char* shard_layout_name(ShardLayout l) { return l == ShardLayout::kContiguous ? "contiguous" : "striped"; }

bool parse_shard_layout(const std::string& text, ShardLayout* out) {
  if (text == "contiguous") *out = ShardLayout::kContiguous;
  else if (text == "striped") *out = ShardLayout::kStriped;
  else return false;
  return true;
}

ShardMap::ShardMap(uint64_t blocks, int shards, ShardLayout layout, uint64_t stripe)
    : blocks_(blocks), shards_(std::max(1, shards)), layout_(layout), stripe_(std::max<uint64_t>(1, stripe)) {}

uint64_t ShardMap::default_stripe(size_t block_bytes, uint64_t blocks, int shards) {
  constexpr size_t kStripeBytes = 4096;
  const uint64_t by_bytes = kStripeBytes / std::max<size_t>(1, block_bytes);
  // A small tensor over many shards: narrower stripes, so that every shard
  // gets some (the busiest shard sends its share to every worker).
  const uint64_t fair = blocks / static_cast<uint64_t>(std::max(1, shards));
  return std::max<uint64_t>(1, std::min(by_bytes, fair));
}

int ShardMap::active_shards(size_t block_bytes, uint64_t blocks, int shards) {
  const uint64_t tensor_bytes = blocks * std::max<size_t>(1, block_bytes);
  const uint64_t fit = tensor_bytes / kMinShardBytes;
  return static_cast<int>(std::clamp<uint64_t>(fit, 1, static_cast<uint64_t>(std::max(1, shards))));
}

int ShardMap::owner_slow(uint64_t block) const {
  if (layout_ == ShardLayout::kStriped) return static_cast<int>((block / stripe_) % static_cast<uint64_t>(shards_));
  // The last shard whose range starts at or below `block`.
  int s = static_cast<int>((block * static_cast<uint64_t>(shards_)) / std::max<uint64_t>(1, blocks_));
  while (s + 1 < shards_ && range_of(s + 1).begin <= block) ++s;
  while (s > 0 && range_of(s).begin > block) --s;
  return s;
}

uint64_t ShardMap::run_end(uint64_t block) const {
  if (block >= blocks_) return blocks_;
  if (shards_ == 1) return blocks_;
  if (layout_ == ShardLayout::kContiguous) return range_of(owner_slow(block)).end;
  return std::min(blocks_, (block / stripe_ + 1) * stripe_);
}

uint64_t ShardMap::count(int shard) const {
  if (layout_ == ShardLayout::kContiguous) return range_of(shard).size();
  const uint64_t stripes = (blocks_ + stripe_ - 1) / stripe_;
  const uint64_t s = static_cast<uint64_t>(shard), n = static_cast<uint64_t>(shards_);
  if (stripes <= s) return 0;
  const uint64_t mine = (stripes - s + n - 1) / n;  // stripes s, s + n, s + 2n, ... below `stripes`
  const uint64_t last = s + (mine - 1) * n;         // its last stripe may be the tensor's short one
  return (mine - 1) * stripe_ + (std::min(blocks_, (last + 1) * stripe_) - last * stripe_);
}

uint64_t ShardMap::next_of(int shard, uint64_t from) const {
  if (from >= blocks_) return blocks_;
  if (layout_ == ShardLayout::kContiguous) {
    const BlockRange r = range_of(shard);
    if (from >= r.end || r.begin == r.end) return blocks_;  // a shard can own no block
    return std::max(from, r.begin);
  }
  const uint64_t n = static_cast<uint64_t>(shards_), s = static_cast<uint64_t>(shard);
  uint64_t stripe = from / stripe_;
  if (stripe % n == s) return from;
  // The next stripe whose number is s modulo n.
  stripe += (s + n - stripe % n) % n;
  const uint64_t b = stripe * stripe_;
  return b < blocks_ ? b : blocks_;
}

}  // namespace omnib
