// Random block-sparse tensors and a naive reference of the block compaction
// contract, shared by the CPU and GPU compaction tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/blocks/block_layout.h"

namespace omnib::test_inputs {

// The special bit patterns of an element type W (uint32_t: 4-byte elements,
// uint16_t: 2-byte ones).
template <typename W>
struct Bits {
  // Outputs are filled with this first, so an element nobody wrote cannot
  // pass. The generators below never produce it.
  static constexpr W kPoison = sizeof(W) == 4 ? W(0x7fbadbadu) : W(0x7badu);
  static constexpr W kSign = W(W(1) << (8 * sizeof(W) - 1));  // -0.0
  static constexpr W kMagnitude = W(~kSign);
};

constexpr uint32_t kPoison = Bits<uint32_t>::kPoison;
constexpr uint32_t kNegativeZero = Bits<uint32_t>::kSign;

// A random element with a bit set other than the sign bit, never the poison.
template <typename W>
W random_nonzero_element(std::mt19937_64& rng) {
  std::uniform_int_distribution<uint32_t> bits;
  W v;
  do v = static_cast<W>(bits(rng)); while ((v & Bits<W>::kMagnitude) == 0 || v == Bits<W>::kPoison);
  return v;
}

// A tensor of `count` elements whose blocks are non-zero with probability
// `density`. Zero blocks mix +0.0 and -0.0; non-zero blocks are dense, half
// zero, or hold a single non-zero element (sometimes a denormal or a
// negative denormal) at a random place, so the first non-zero element of a
// block can sit anywhere in it.
template <typename W = uint32_t>
std::vector<W> make_block_sparse(size_t count, size_t block_size, double density, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution nonzero(density);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_int_distribution<int> style(0, 3);
  auto random_nonzero = [&] { return random_nonzero_element<W>(rng); };
  const W kNegativeZero = Bits<W>::kSign;
  BlockLayout layout(count, block_size);
  std::vector<W> t(count);
  for (uint64_t b = 0; b < layout.num_blocks(); ++b) {
    size_t begin = layout.block_begin(b), len = layout.block_length(b);
    for (size_t i = 0; i < len; ++i) t[begin + i] = (bits(rng) & 1) ? kNegativeZero : 0;
    if (!nonzero(rng)) continue;
    switch (style(rng)) {
      case 0:  // dense
        for (size_t i = 0; i < len; ++i) t[begin + i] = random_nonzero();
        break;
      case 1:  // about half the words
        for (size_t i = 0; i < len; ++i) {
          if (bits(rng) & 1) t[begin + i] = random_nonzero();
        }
        t[begin + rng() % len] = random_nonzero();
        break;
      case 2:  // one denormal, positive or negative
        t[begin + rng() % len] = (bits(rng) & 1) ? W(1) : W(kNegativeZero | 1);
        break;
      default:  // one word, often the block's last
        t[begin + ((bits(rng) & 1) ? len - 1 : rng() % len)] = random_nonzero();
        break;
    }
  }
  return t;
}

// A tensor of `count` elements whose non-zero blocks are sparse inside:
// each block is zero, holds one element, or has each element non-zero with
// probability 1/64, 1/8, 1/4 or 1/2 (so some blocks sit either side of the
// 1/kTakeDivisor line that decides whether a block's elements are taken),
// over a background of +0.0 and -0.0.
template <typename W = uint32_t>
std::vector<W> make_element_sparse(size_t count, size_t block_size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_int_distribution<int> style(0, 5);
  auto random_nonzero = [&] { return random_nonzero_element<W>(rng); };
  BlockLayout layout(count, block_size);
  std::vector<W> t(count);
  for (uint64_t b = 0; b < layout.num_blocks(); ++b) {
    const size_t begin = layout.block_begin(b), len = layout.block_length(b);
    for (size_t i = 0; i < len; ++i) t[begin + i] = (bits(rng) % 7 == 0) ? Bits<W>::kSign : W(0);
    const int s = style(rng);
    if (s == 0) continue;  // zero
    if (s == 1) {          // one element
      t[begin + rng() % len] = random_nonzero();
      continue;
    }
    const uint32_t one_in = s == 2 ? 64 : s == 3 ? 8 : s == 4 ? 4 : 2;
    for (size_t i = 0; i < len; ++i)
      if (bits(rng) % one_in == 0) t[begin + i] = random_nonzero();
  }
  return t;
}

// The expected compaction of `range`, computed element by element.
template <typename W = uint32_t>
struct Compacted {
  std::vector<uint64_t> indices;
  std::vector<W> values;
};

template <typename W>
Compacted<W> naive_compact(const std::vector<W>& t, const BlockLayout& layout, BlockRange range) {
  Compacted<W> c;
  for (uint64_t b = range.begin; b < range.end; ++b) {
    size_t begin = layout.block_begin(b), len = layout.block_length(b);
    bool any = false;
    for (size_t i = 0; i < len; ++i) any |= (t[begin + i] & Bits<W>::kMagnitude) != 0;
    if (!any) continue;
    c.indices.push_back(b);
    c.values.insert(c.values.end(), t.begin() + begin, t.begin() + begin + len);
  }
  return c;
}

// A random packed list over `range` (each block listed with probability
// `density`) with random values, as a scatter input.
template <typename W = uint32_t>
Compacted<W> make_packed(const BlockLayout& layout, BlockRange range, double density, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution listed(density);
  Compacted<W> c;
  for (uint64_t b = range.begin; b < range.end; ++b) {
    if (!listed(rng)) continue;
    c.indices.push_back(b);
    for (size_t i = 0; i < layout.block_length(b); ++i) {
      W v;
      do v = static_cast<W>(rng()); while (v == Bits<W>::kPoison);
      c.values.push_back(v);
    }
  }
  return c;
}

// What scatter must leave in a tensor that held `before`.
template <typename W>
std::vector<W> naive_scatter(std::vector<W> before, const Compacted<W>& packed, const BlockLayout& layout,
                             BlockRange range, bool zero_unlisted) {
  if (zero_unlisted) {
    for (size_t i = layout.block_begin(range.begin); i < layout.block_begin(range.begin) + layout.elements_in(range); ++i) {
      before[i] = 0;
    }
  }
  size_t src = 0;
  for (uint64_t b : packed.indices) {
    for (size_t i = 0; i < layout.block_length(b); ++i) before[layout.block_begin(b) + i] = packed.values[src++];
  }
  return before;
}

// Element counts worth testing for a block size: tiny, around one block, and
// many blocks with a short last one.
inline std::vector<size_t> interesting_counts(size_t block_size) {
  return {1, block_size - (block_size > 1), block_size, block_size + 1, 5 * block_size + 3, 64 * block_size - 1,
          300 * block_size + block_size / 2 + 1};
}

// For SCOPED_TRACE.
inline std::string describe(size_t count, size_t block_size, double density, BlockRange r) {
  return "count " + std::to_string(count) + ", block size " + std::to_string(block_size) + ", density " +
         std::to_string(density) + ", blocks [" + std::to_string(r.begin) + ", " + std::to_string(r.end) + ")";
}

}  // namespace omnib::test_inputs
