// Block-sparse inputs for the microbenchmarks: fast to build, with dense
// non-zero blocks (what a gradient's touched rows look like).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "engine/blocks/block_compaction.h"
#include "engine/blocks/block_layout.h"

namespace omnib::bench {

// Benchmarks take the density in permille so it fits an integer argument.
inline double density_of(int64_t permille) { return static_cast<double>(permille) / 1000.0; }

// Each block is all 1.0f with probability `density`, else all zero.
inline std::vector<float> make_block_sparse(size_t count, size_t block_size, double density, uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution nonzero(density);
  BlockLayout layout(count, block_size);
  std::vector<float> t(count, 0.0f);
  for (uint64_t b = 0; b < layout.num_blocks(); ++b) {
    if (!nonzero(rng)) continue;
    std::fill_n(t.begin() + layout.block_begin(b), layout.block_length(b), 1.0f);
  }
  return t;
}

// The tensor's non-zero blocks in packed form (a scatter input).
struct Packed {
  std::vector<uint64_t> indices;
  std::vector<float> values;
  uint64_t n = 0;
};

inline Packed pack(const std::vector<float>& t, const BlockLayout& layout) {
  BlockRange all{0, layout.num_blocks()};
  Packed p;
  p.indices.resize(all.size());
  p.values.resize(compacted_values_capacity(layout, all));
  Result<uint64_t> n = compact_blocks(t.data(), sizeof(float), layout, all, p.indices.data(), p.values.data());
  p.n = n.is_ok() ? n.value() : 0;
  return p;
}

// Bytes compaction must move: read the tensor, write the blocks and indices.
inline int64_t compaction_bytes(const BlockLayout& layout, uint64_t n, uint64_t last) {
  return static_cast<int64_t>(layout.count() * 4 + packed_elements(layout, n, last) * 4 + n * 8);
}

// Bytes scatter must move: read blocks and indices, write the blocks, and
// with zeroing write the rest of the tensor too.
inline int64_t scatter_bytes(const BlockLayout& layout, uint64_t n, uint64_t last, bool zero_unlisted) {
  uint64_t packed = packed_elements(layout, n, last) * 4;
  return static_cast<int64_t>(packed + n * 8 + (zero_unlisted ? layout.count() * 4 : packed));
}

}  // namespace omnib::bench
