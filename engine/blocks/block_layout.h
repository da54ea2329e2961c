// How a tensor of `count` elements is cut into blocks of `block_size` elements,
// and how block indices are split into contiguous shard ranges.
#pragma once

#include <cstddef>
#include <cstdint>

namespace omnib {

// Elements per block when nobody says otherwise (--block-size, sweeps, the
// engine's setup): the one place this default is spelled.
constexpr size_t kDefaultBlockSize = 256;

struct BlockRange {
  uint64_t begin = 0;  // first block index
  uint64_t end = 0;    // one past the last block index
  uint64_t size() const { return end - begin; }
};

class BlockLayout {
 public:
  BlockLayout(size_t count, size_t block_size) : count_(count), block_size_(block_size) {}

  size_t count() const { return count_; }
  size_t block_size() const { return block_size_; }
  uint64_t num_blocks() const { return (count_ + block_size_ - 1) / block_size_; }
  size_t block_begin(uint64_t block) const { return static_cast<size_t>(block) * block_size_; }
  // Elements in `block`; only the last block may be short.
  size_t block_length(uint64_t block) const {
    size_t begin = block_begin(block);
    return count_ - begin < block_size_ ? count_ - begin : block_size_;
  }
  // Shard s of `shards` owns a contiguous, balanced range of block indices.
  BlockRange shard_range(int shard, int shards) const {
    uint64_t nb = num_blocks();
    return {nb * shard / shards, nb * (shard + 1) / shards};
  }
  // Elements covered by blocks [range.begin, range.end).
  size_t elements_in(BlockRange r) const {
    if (r.size() == 0) return 0;
    return block_begin(r.end - 1) + block_length(r.end - 1) - block_begin(r.begin);
  }

 private:
  size_t count_;
  size_t block_size_;
};

}  // namespace omnib
