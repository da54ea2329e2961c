#include "engine/blocks/block_scan.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/blocks/nonzero_mask.h"

namespace omnib {
namespace {

// Any bit but the sign bit set in n words of type W; chunks of 64 keep the
// loop branch-free and let the compiler vectorize it.
template <typename W>
bool any_magnitude_bits(const W* data, size_t n) {
  constexpr W kMagnitude = static_cast<W>(static_cast<W>(~W{0}) >> 1);  // ~ promotes to int
  W acc = 0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    W chunk = 0;
    for (size_t j = 0; j < 64; ++j) chunk |= data[i + j] & kMagnitude;
    if (chunk) return true;
  }
  for (; i < n; ++i) acc |= data[i] & kMagnitude;
  return acc != 0;
}

// Counts in 32-bit lanes (the loop vectorizes to compares and adds), a
// chunk at a time so that no lane overflows.
template <typename W>
uint64_t count_magnitude(const W* data, size_t n) {
  constexpr W kMagnitude = static_cast<W>(static_cast<W>(~W{0}) >> 1);
  constexpr size_t kChunk = size_t{1} << 30;
  uint64_t count = 0;
  for (size_t at = 0; at < n; at += kChunk) {
    const size_t end = std::min(n, at + kChunk);
    uint32_t part = 0;
    for (size_t i = at; i < end; ++i) part += (data[i] & kMagnitude) != 0;
    count += part;
  }
  return count;
}

}  // namespace

uint64_t count_nonzero(const void* data, size_t n, size_t elem_size) {
  if (elem_size == 2) return count_magnitude(static_cast<const uint16_t*>(data), n);
  return count_magnitude(static_cast<const uint32_t*>(data), n);
}

// Masking the sign bit makes -0.0 count as zero; an int32 of 0x80000000 is
// the only value mistaken for zero, which workloads never generate.
bool block_is_nonzero(const uint32_t* data, size_t n) { return any_magnitude_bits(data, n); }

bool block_is_nonzero(const uint16_t* data, size_t n) { return any_magnitude_bits(data, n); }

bool block_is_nonzero(const void* data, size_t n, size_t elem_size) {
  if (elem_size == 2) return block_is_nonzero(static_cast<const uint16_t*>(data), n);
  return block_is_nonzero(static_cast<const uint32_t*>(data), n);
}

namespace {

// Small blocks (top-k inputs scanned at block size 1 to 32): a call and a
// branch per block would cost more than reading it, so blocks are tested
// inline and their indices written branch-free into a stack buffer.
template <typename W>
void find_small_nonzero_blocks(const W* t, size_t block_size, BlockRange range, std::vector<uint64_t>& out) {
  constexpr W kMagnitude = static_cast<W>(static_cast<W>(~W{0}) >> 1);
  constexpr size_t kChunk = 1024;
  uint64_t found[kChunk];
  for (uint64_t begin = range.begin; begin < range.end; begin += kChunk) {
    const uint64_t end = std::min<uint64_t>(range.end, begin + kChunk);
    size_t n = 0;
    if (block_size == 1) {
      // Every element is a block: sixteen at a time through their mask, so
      // a top-k tensor's zero runs cost a test per 16 rather than a store each.
      uint64_t b = begin;
      for (; b + 16 <= end; b += 16)
        for (uint32_t mask = nonzero_mask16<W>(reinterpret_cast<const uint8_t*>(t + b)); mask != 0; mask &= mask - 1)
          found[n++] = b + static_cast<uint64_t>(std::countr_zero(mask));
      for (; b < end; ++b) {
        found[n] = b;
        n += (t[b] & kMagnitude) != 0;
      }
    } else {
      for (uint64_t b = begin; b < end; ++b) {
        found[n] = b;
        n += any_magnitude_bits(t + b * block_size, block_size);
      }
    }
    out.insert(out.end(), found, found + n);
  }
}

constexpr size_t kSmallBlock = 32;

}  // namespace

void find_nonzero_blocks(const void* data, size_t elem_size, const BlockLayout& layout, BlockRange range,
                         std::vector<uint64_t>& out) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (layout.block_size() <= kSmallBlock) {
    // Whole blocks on the fast path; the tensor's short last block, if in range, after.
    const uint64_t whole = std::min<uint64_t>(range.end, layout.count() / layout.block_size());
    if (range.begin < whole) {
      if (elem_size == 2)
        find_small_nonzero_blocks(static_cast<const uint16_t*>(data), layout.block_size(), {range.begin, whole}, out);
      else
        find_small_nonzero_blocks(static_cast<const uint32_t*>(data), layout.block_size(), {range.begin, whole}, out);
      range.begin = whole;
    }
  }
  for (uint64_t b = range.begin; b < range.end; ++b) {
    if (block_is_nonzero(bytes + layout.block_begin(b) * elem_size, layout.block_length(b), elem_size))
      out.push_back(b);
  }
}

namespace {

template <typename W>
void find_and_count(const W* t, const BlockLayout& layout, BlockRange range, std::vector<uint64_t>& out,
                    std::vector<uint32_t>& counts) {
  for (uint64_t b = range.begin; b < range.end; ++b) {
    // The wide test first: most blocks of a block-sparse tensor are zero,
    // and an OR per element is cheaper than a count. A block that is not
    // zero is counted at once, from cache.
    const W* block = t + layout.block_begin(b);
    if (!any_magnitude_bits(block, layout.block_length(b))) continue;
    out.push_back(b);
    counts.push_back(static_cast<uint32_t>(count_magnitude(block, layout.block_length(b))));
  }
}

}  // namespace

void find_and_count_nonzero_blocks(const void* data, size_t elem_size, const BlockLayout& layout, BlockRange range,
                                   std::vector<uint64_t>& out, std::vector<uint32_t>& counts) {
  if (layout.block_size() <= kSmallBlock) {
    // Tiny blocks: the branch-free search, then their counts (few, in cache).
    const size_t before = out.size();
    find_nonzero_blocks(data, elem_size, layout, range, out);
    if (layout.block_size() == 1) {  // a found block of one element holds one non-zero
      counts.insert(counts.end(), out.size() - before, 1);
      return;
    }
    const auto* bytes = static_cast<const uint8_t*>(data);
    for (size_t i = before; i < out.size(); ++i)
      counts.push_back(static_cast<uint32_t>(
          count_nonzero(bytes + layout.block_begin(out[i]) * elem_size, layout.block_length(out[i]), elem_size)));
    return;
  }
  if (elem_size == 2)
    find_and_count(static_cast<const uint16_t*>(data), layout, range, out, counts);
  else
    find_and_count(static_cast<const uint32_t*>(data), layout, range, out, counts);
}

namespace {

// Where a found block's elements go in `taken`, sized by the scan's count
// so that each element is then two stores; or kNotTaken, recorded by
// opening, for a block too dense to take.
template <typename W>
class TakenBlock {
 public:
  TakenBlock(FoundElements& taken, uint32_t count, size_t len) {
    if (!takes_block(count, len)) {
      taken.first.push_back(FoundElements::kNotTaken);
      return;
    }
    const size_t at = taken.positions.size();
    taken.first.push_back(at);
    taken.positions.resize(at + count);
    taken.values.resize((at + count) * sizeof(W));
    pos_ = taken.positions.data() + at;
    val_ = taken.values.data() + at * sizeof(W);
  }
  bool taking() const { return pos_ != nullptr; }
  // Element i of the block at `src`.
  void take(const uint8_t* src, size_t i) {
    *pos_++ = static_cast<uint32_t>(i);
    std::memcpy(val_, src + i * sizeof(W), sizeof(W));
    val_ += sizeof(W);
  }

 private:
  uint32_t* pos_ = nullptr;
  uint8_t* val_ = nullptr;
};

template <typename W>
void take_found(const W* t, const BlockLayout& layout, const std::vector<uint64_t>& out,
                const std::vector<uint32_t>& counts, size_t from, FoundElements& taken) {
  for (size_t k = from; k < out.size(); ++k) {
    const uint64_t len = layout.block_length(out[k]);
    TakenBlock<W> block(taken, counts[k], len);
    if (!block.taking()) continue;
    const auto* src = reinterpret_cast<const uint8_t*>(t + layout.block_begin(out[k]));
    for_each_nonzero<W>(src, len, [&](size_t i) { block.take(src, i); });
  }
}

// Blocks of up to this many elements are counted from their 16-element
// non-zero masks, which are kept and, when the block is sparse enough,
// walked to take its elements: one pass over the block instead of a count
// and then a take.
constexpr size_t kMaskedBlock = 1024;

// One non-zero block of kSmallBlock < len <= kMaskedBlock elements: its
// count, and its elements when it is sparse enough to take.
template <typename W>
void count_and_take_block(const W* block, size_t len, std::vector<uint32_t>& counts, FoundElements& taken) {
  constexpr W kMagnitude = static_cast<W>(static_cast<W>(~W{0}) >> 1);
  const auto* src = reinterpret_cast<const uint8_t*>(block);
  uint32_t masks[kMaskedBlock / 16];
  const size_t groups = len / 16;
  uint32_t count = 0;
  for (size_t g = 0; g < groups; ++g) {
    masks[g] = nonzero_mask16<W>(src + g * 16 * sizeof(W));
    count += static_cast<uint32_t>(std::popcount(masks[g]));
  }
  for (size_t i = groups * 16; i < len; ++i) count += (block[i] & kMagnitude) != 0;
  counts.push_back(count);
  TakenBlock<W> taking(taken, count, len);
  if (!taking.taking()) return;
  for (size_t g = 0; g < groups; ++g)
    for (uint32_t mask = masks[g]; mask != 0; mask &= mask - 1)
      taking.take(src, g * 16 + static_cast<size_t>(std::countr_zero(mask)));
  for (size_t i = groups * 16; i < len; ++i)
    if (block[i] & kMagnitude) taking.take(src, i);
}

// Blocks of kSmallBlock < size <= kMaskedBlock: zero blocks skipped by the
// wide test, the others counted and taken in one pass (count_and_take_block).
// Other sizes a piece at a time, each piece's elements taken right after it
// was searched, while it is still in cache.
template <typename W>
void find_count_and_take(const W* t, const BlockLayout& layout, BlockRange range, std::vector<uint64_t>& out,
                         std::vector<uint32_t>& counts, FoundElements& taken) {
  if (layout.block_size() > kSmallBlock && layout.block_size() <= kMaskedBlock) {
    for (uint64_t b = range.begin; b < range.end; ++b) {
      const W* block = t + layout.block_begin(b);
      const size_t len = layout.block_length(b);
      if (!any_magnitude_bits(block, len)) continue;
      out.push_back(b);
      count_and_take_block(block, len, counts, taken);
    }
    return;
  }
  constexpr uint64_t kPieceBytes = 64 << 10;
  const uint64_t piece = std::max<uint64_t>(1, kPieceBytes / (layout.block_size() * sizeof(W)));
  for (uint64_t begin = range.begin; begin < range.end; begin += piece) {
    const size_t before = out.size();
    find_and_count_nonzero_blocks(t, sizeof(W), layout, {begin, std::min(range.end, begin + piece)}, out, counts);
    take_found(t, layout, out, counts, before, taken);
  }
}

}  // namespace

void find_count_and_take_nonzero_blocks(const void* data, size_t elem_size, const BlockLayout& layout,
                                        BlockRange range, std::vector<uint64_t>& out, std::vector<uint32_t>& counts,
                                        FoundElements& taken) {
  if (elem_size == 2)
    find_count_and_take(static_cast<const uint16_t*>(data), layout, range, out, counts, taken);
  else
    find_count_and_take(static_cast<const uint32_t*>(data), layout, range, out, counts, taken);
}

std::vector<uint64_t> nonzero_blocks(const void* data, size_t elem_size, const BlockLayout& layout) {
  std::vector<uint64_t> out;
  find_nonzero_blocks(data, elem_size, layout, {0, layout.num_blocks()}, out);
  return out;
}

}  // namespace omnib
