// Single-pass prefix sum of per-tile counts across the CTAs of one launch:
// decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan
// with Decoupled Look-back", 2016). Each tile publishes its own count as soon
// as it knows it, then sums its predecessors' published values walking back
// until one has published an inclusive prefix; no second pass over the data.
//
// Tiles are numbered in the order CTAs start (take_tile_number), so every
// predecessor a tile waits for is already running: no deadlock whatever the
// hardware's scheduling order. The state array is zeroed before each launch.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>

namespace omnib::gpu::detail {

// A tile state packs its status in the top two bits with a 62-bit value, so
// one 64-bit atomic access publishes both.
using TileState = unsigned long long;
constexpr TileState kStatusInvalid = 0;  // nothing published yet (zeroed memory)
constexpr TileState kStatusAggregate = TileState{1} << 62;
constexpr TileState kStatusPrefix = TileState{2} << 62;
constexpr TileState kStatusMask = TileState{3} << 62;
constexpr TileState kValueMask = ~kStatusMask;

// Scratch layout: a tile counter, then one state per tile.
struct TileScratch {
  unsigned int* next_tile;
  TileState* states;
};

inline size_t tile_scratch_bytes(uint64_t tiles) { return sizeof(TileState) * (1 + tiles); }

inline TileScratch tile_scratch(void* scratch) {
  auto* base = static_cast<TileState*>(scratch);
  return {reinterpret_cast<unsigned int*>(base), base + 1};
}

__device__ __forceinline__ void publish(TileState* state, TileState status, uint64_t value) {
  cuda::atomic_ref<TileState, cuda::thread_scope_device> ref(*state);
  ref.store(status | value, cuda::memory_order_relaxed);
}

__device__ __forceinline__ TileState read_state(TileState* state) {
  cuda::atomic_ref<TileState, cuda::thread_scope_device> ref(*state);
  return ref.load(cuda::memory_order_relaxed);
}

// Called by thread 0 only: this CTA's tile, in CTA start order.
__device__ __forceinline__ uint64_t take_tile_number(const TileScratch& s) { return atomicAdd(s.next_tile, 1u); }

// Called by all 32 lanes of one warp with the tile's count (same on every
// lane). Publishes it, looks back, publishes the inclusive prefix and returns
// the exclusive prefix (on every lane).
__device__ __forceinline__ uint64_t tile_exclusive_prefix(const TileScratch& s, uint64_t tile, uint64_t count) {
  const unsigned lane = threadIdx.x & 31;
  if (tile == 0) {
    if (lane == 0) publish(&s.states[0], kStatusPrefix, count);
    return 0;
  }
  if (lane == 0) publish(&s.states[tile], kStatusAggregate, count);

  uint64_t exclusive = 0;
  int64_t nearest = static_cast<int64_t>(tile) - 1;  // lane 0 reads this tile, lane i the i-th before it
  while (true) {
    int64_t t = nearest - static_cast<int64_t>(lane);
    TileState st = kStatusPrefix;  // before tile 0: an inclusive prefix of 0
    if (t >= 0) {
      st = read_state(&s.states[t]);
      while ((st & kStatusMask) == kStatusInvalid) {
        __nanosleep(32);  // the predecessor is still reading its tile
        st = read_state(&s.states[t]);
      }
    }
    const unsigned prefix_lanes = __ballot_sync(0xffffffffu, (st & kStatusMask) == kStatusPrefix);
    // Sum the lanes up to and including the nearest inclusive prefix.
    const unsigned last = prefix_lanes ? __ffs(prefix_lanes) - 1 : 31;
    uint64_t v = lane <= last ? (st & kValueMask) : 0;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    exclusive += v;
    if (prefix_lanes) break;
    nearest -= 32;
  }
  if (lane == 0) publish(&s.states[tile], kStatusPrefix, exclusive + count);
  return exclusive;
}

}  // namespace omnib::gpu::detail
