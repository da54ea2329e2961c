// Which aggregator shard owns which block. Contiguous: shard s owns one
// balanced range of block indices. Striped (the default): block indices are
// dealt out in stripes of `stripe` blocks, round robin, so that a tensor whose
// non-zeros crowd one region (a frequency-sorted embedding table) still
// spreads evenly over the shards. Either way a shard's blocks, taken in
// increasing index, are what its workers stream to it, so the look-ahead
// protocol is the same.
#pragma once

#include <cstdint>
#include <string>

#include "engine/blocks/block_layout.h"

namespace omnib {

enum class ShardLayout { kContiguous, kStriped };

// "contiguous" / "striped".
const char* shard_layout_name(ShardLayout l);
bool parse_shard_layout(const std::string& text, ShardLayout* out);

class ShardMap {
 public:
  ShardMap() = default;
  // `stripe` (blocks) is used by the striped layout only.
  ShardMap(uint64_t blocks, int shards, ShardLayout layout, uint64_t stripe);

  // A stripe of about 4 KiB of values: long enough for a send or a copy to
  // run over several blocks at once, short enough to spread any hot region;
  // narrower when `blocks` would not give each of `shards` a stripe.
  static uint64_t default_stripe(size_t block_bytes, uint64_t blocks, int shards);

  // How many of `shards` a tensor of `blocks` blocks is dealt to: as many as
  // give each at least kMinShardBytes of values, at least one, at most all.
  // Every shard in use costs each worker a stream there and back (at least
  // two frames a call, however few blocks it holds), so a small tensor over
  // many shards is bound by frames, not bytes. The shards past the count own
  // no block and exchange nothing for the call.
  static constexpr size_t kMinShardBytes = 16384;
  static int active_shards(size_t block_bytes, uint64_t blocks, int shards);

  uint64_t blocks() const { return blocks_; }
  int shards() const { return shards_; }
  ShardLayout layout() const { return layout_; }

  // Asked per block by the scan and the decoders: one shard (the direct
  // route, a small tensor) answers without a division.
  int owner(uint64_t block) const { return shards_ == 1 ? 0 : owner_slow(block); }
  // The end of the run of adjacent blocks, `block`'s among them, that its
  // owner holds: a walk over blocks in increasing index asks owner() once
  // per run instead of once per block (two divisions each).
  uint64_t run_end(uint64_t block) const;
  // Blocks of `shard` in the whole tensor.
  uint64_t count(int shard) const;
  // The first block of `shard` at or after `from` (blocks() when none).
  uint64_t next_of(int shard, uint64_t from) const;
  // Calls fn(begin, end) for each run of adjacent blocks of `shard` inside
  // [from, to), in increasing order.
  template <typename Fn>
  void for_each_run(int shard, uint64_t from, uint64_t to, Fn&& fn) const {
    if (to > blocks_) to = blocks_;
    if (layout_ == ShardLayout::kContiguous) {
      const BlockRange r = range_of(shard);
      const uint64_t b = from > r.begin ? from : r.begin, e = to < r.end ? to : r.end;
      if (b < e) fn(b, e);
      return;
    }
    for (uint64_t b = next_of(shard, from); b < to;) {
      const uint64_t stripe_end = (b / stripe_ + 1) * stripe_;
      const uint64_t e = stripe_end < to ? stripe_end : to;
      fn(b, e);
      b = next_of(shard, e);
    }
  }

 private:
  int owner_slow(uint64_t block) const;
  BlockRange range_of(int shard) const {
    return {blocks_ * static_cast<uint64_t>(shard) / static_cast<uint64_t>(shards_),
            blocks_ * static_cast<uint64_t>(shard + 1) / static_cast<uint64_t>(shards_)};
  }

  uint64_t blocks_ = 0;
  int shards_ = 1;
  ShardLayout layout_ = ShardLayout::kContiguous;
  uint64_t stripe_ = 1;
};

}  // namespace omnib
