// Device-side building blocks shared by the compaction and scatter kernels:
// the tile shape and vector loads/stores of 4-byte words. Only .cu files
// include this.
//
// A CTA of kThreads threads works on a tile of kTileElems elements held in
// registers (kElemsPerThread per thread). For block sizes up to kTileElems a
// tile is blocks_per_tile whole blocks; larger blocks are cut into
// chunks_per_block tiles (the scatter kernels) or streamed by one CTA (the
// compaction kernel for large blocks).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace omnib::gpu::detail {

constexpr int kThreads = 256;
constexpr int kElemsPerThread = 16;
constexpr uint32_t kTileElems = kThreads * kElemsPerThread;  // 4096 elements, 16 KiB
constexpr uint32_t kMagnitude = 0x7fffffffu;                  // all bits but a float's sign

// How a list of `slots` blocks maps onto tiles.
struct TileShape {
  uint32_t block_size = 1;
  uint32_t blocks_per_tile = 1;   // > 1 only when block_size <= kTileElems / 2
  uint32_t chunks_per_block = 1;  // > 1 only when block_size > kTileElems
  uint64_t tiles = 0;
};

inline TileShape tile_shape(uint32_t block_size, uint64_t slots) {
  TileShape s;
  s.block_size = block_size;
  if (block_size <= kTileElems) {
    s.blocks_per_tile = kTileElems / block_size;
    s.tiles = (slots + s.blocks_per_tile - 1) / s.blocks_per_tile;
  } else {
    s.chunks_per_block = (block_size + kTileElems - 1) / kTileElems;
    s.tiles = slots * s.chunks_per_block;
  }
  return s;
}

// VEC consecutive 4-byte words; VEC is 4 (one 16-byte access) or 1.
template <int VEC>
struct Words {
  uint32_t w[VEC];
};

template <int VEC>
__device__ __forceinline__ Words<VEC> zero_words() {
  Words<VEC> v;
#pragma unroll
  for (int i = 0; i < VEC; ++i) v.w[i] = 0;
  return v;
}

// Loads the first `n` (1..VEC) words at `p`; the rest read as zero. Streaming
// (evict-first) loads: every element is read exactly once.
template <int VEC>
__device__ __forceinline__ Words<VEC> load_words(const uint32_t* p, uint32_t n) {
  Words<VEC> v;
  if constexpr (VEC == 4) {
    if (n == 4) {
      uint4 q = __ldcs(reinterpret_cast<const uint4*>(p));
      v.w[0] = q.x;
      v.w[1] = q.y;
      v.w[2] = q.z;
      v.w[3] = q.w;
      return v;
    }
  }
#pragma unroll
  for (int i = 0; i < VEC; ++i) v.w[i] = i < static_cast<int>(n) ? __ldcs(p + i) : 0u;
  return v;
}

// Stores the first `n` (1..VEC) words of `v` at `p`.
template <int VEC>
__device__ __forceinline__ void store_words(uint32_t* p, const Words<VEC>& v, uint32_t n) {
  if constexpr (VEC == 4) {
    if (n == 4) {
      *reinterpret_cast<uint4*>(p) = make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < VEC; ++i) {
    if (i < static_cast<int>(n)) p[i] = v.w[i];
  }
}

// True if a word has a bit set other than bit 31 (-0.0f is zero).
template <int VEC>
__device__ __forceinline__ bool any_nonzero(const Words<VEC>& v) {
  uint32_t acc = 0;
#pragma unroll
  for (int i = 0; i < VEC; ++i) acc |= v.w[i];
  return (acc & kMagnitude) != 0;
}

// True if every bit is clear (+0.0 only; a -0.0 has its sign bit set).
template <int VEC>
__device__ __forceinline__ bool all_bits_zero(const Words<VEC>& v) {
  uint32_t acc = 0;
#pragma unroll
  for (int i = 0; i < VEC; ++i) acc |= v.w[i];
  return acc == 0;
}

// 16-byte accesses need B % 4 == 0 (every vector then stays inside one block
// and every block starts 16-byte aligned) and 16-byte aligned base pointers.
inline bool can_use_vec4(uint32_t block_size, const void* a, const void* b) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return block_size % 4 == 0 && aligned(a) && aligned(b);
}

}  // namespace omnib::gpu::detail
