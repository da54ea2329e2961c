// Device-side building blocks shared by the compaction and scatter kernels:
// the tile shape and vector loads/stores of elements of 4 bytes (float,
// int32) or 2 bytes (bf16, half). Only .cu files include this.
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
constexpr uint32_t kTileElems = kThreads * kElemsPerThread;  // 4096 elements: 16 KiB, or 8 KiB of 2-byte ones
// Compaction holds 128 bytes per thread, 32 KiB per CTA, whatever the
// element size: its CTAs spend part of their life ranking blocks with no
// load in flight, so the bytes each CTA has moving set its bandwidth
// (measured on an H200: 16 KiB tiles of bf16 reached about half of copy
// bandwidth where 32 KiB tiles of fp32 reached 0.9; the scatters, which have
// no such phase, lose from bigger tiles: docs/gpu.md).
template <typename E>
constexpr int kCompactElemsPerThread = static_cast<int>(128 / sizeof(E));
template <typename E>
constexpr uint32_t kCompactTileElems = kThreads * kCompactElemsPerThread<E>;
// At most this many blocks per tile (small blocks of 2-byte elements would
// be 16384): one int of shared memory each, ranked in 32-block words that one
// warp scans.
constexpr uint32_t kCompactMaxTileBlocks = 8192;

// How a list of `slots` blocks maps onto tiles.
struct TileShape {
  uint32_t block_size = 1;
  uint32_t blocks_per_tile = 1;   // > 1 only when block_size <= kTileElems / 2
  uint32_t chunks_per_block = 1;  // > 1 only when block_size > kTileElems
  uint64_t tiles = 0;
};

inline TileShape tile_shape(uint32_t block_size, uint64_t slots, uint32_t tile_elems = kTileElems) {
  TileShape s;
  s.block_size = block_size;
  if (block_size <= tile_elems) {
    s.blocks_per_tile = tile_elems / block_size;
    s.tiles = (slots + s.blocks_per_tile - 1) / s.blocks_per_tile;
  } else {
    s.chunks_per_block = (block_size + tile_elems - 1) / tile_elems;
    s.tiles = slots * s.chunks_per_block;
  }
  return s;
}

// The bits of an element type E: uint32_t (float, int32) or uint16_t (bf16, half).
template <typename E>
constexpr E kSignBit = static_cast<E>(E{1} << (8 * sizeof(E) - 1));
template <typename E>
constexpr E kMagnitude = static_cast<E>(~kSignBit<E>);  // all bits but the sign (~ promotes to int)
// Elements of one 16-byte access: 4 of 4 bytes, 8 of 2 bytes.
template <typename E>
constexpr int kVec = static_cast<int>(16 / sizeof(E));

// VEC consecutive elements of type E; VEC is kVec<E> (one 16-byte access) or 1.
template <typename E, int VEC>
struct alignas(VEC * sizeof(E)) Words {
  E w[VEC];
};

template <typename E, int VEC>
__device__ __forceinline__ Words<E, VEC> zero_words() {
  Words<E, VEC> v;
#pragma unroll
  for (int i = 0; i < VEC; ++i) v.w[i] = 0;
  return v;
}

// Loads the first `n` (1..VEC) elements at `p`; the rest read as zero.
// Streaming (evict-first) loads: every element is read exactly once.
template <typename E, int VEC>
__device__ __forceinline__ Words<E, VEC> load_words(const E* p, uint32_t n) {
  Words<E, VEC> v;
  if constexpr (VEC * sizeof(E) == 16) {
    if (n == VEC) {
      *reinterpret_cast<uint4*>(v.w) = __ldcs(reinterpret_cast<const uint4*>(p));
      return v;
    }
  }
#pragma unroll
  for (int i = 0; i < VEC; ++i) v.w[i] = i < static_cast<int>(n) ? __ldcs(p + i) : E{0};
  return v;
}

// Stores the first `n` (1..VEC) elements of `v` at `p`.
template <typename E, int VEC>
__device__ __forceinline__ void store_words(E* p, const Words<E, VEC>& v, uint32_t n) {
  if constexpr (VEC * sizeof(E) == 16) {
    if (n == VEC) {
      *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(v.w);
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < VEC; ++i) {
    if (i < static_cast<int>(n)) p[i] = v.w[i];
  }
}

// True if an element has a bit set other than its sign bit (-0.0 is zero).
template <typename E, int VEC>
__device__ __forceinline__ bool any_nonzero(const Words<E, VEC>& v) {
  E acc = 0;
#pragma unroll
  for (int i = 0; i < VEC; ++i) acc |= v.w[i];
  return (acc & kMagnitude<E>) != 0;
}

// How many elements have a bit set other than their sign bit.
template <typename E, int VEC>
__device__ __forceinline__ uint32_t nonzero_elements(const Words<E, VEC>& v) {
  uint32_t n = 0;
#pragma unroll
  for (int i = 0; i < VEC; ++i) n += (v.w[i] & kMagnitude<E>) != 0;
  return n;
}

// True if every bit is clear (+0.0 only; a -0.0 has its sign bit set).
template <typename E, int VEC>
__device__ __forceinline__ bool all_bits_zero(const Words<E, VEC>& v) {
  E acc = 0;
#pragma unroll
  for (int i = 0; i < VEC; ++i) acc |= v.w[i];
  return acc == 0;
}

// 16-byte accesses need B % kVec == 0 (every vector then stays inside one
// block and every block starts 16-byte aligned) and 16-byte aligned base pointers.
template <typename E>
inline bool can_use_vec(uint32_t block_size, const void* a, const void* b) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return block_size % kVec<E> == 0 && aligned(a) && aligned(b);
}

}  // namespace omnib::gpu::detail
