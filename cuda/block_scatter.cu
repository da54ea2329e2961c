// Block scatter on the device (contract: engine/blocks/block_compaction.h), the
// inverse of compaction: packed result blocks go back to their places.
//
//  - kListedOnly: tiles run over the packed list; each element is read once
//    and written once.
//  - kZeroUnlisted: tiles run over the tensor's range, so every element of
//    the range is written once; each CTA finds the listed blocks of its tile
//    with one warp-wide search of the sorted index list.
#include <limits>
#include <string>

#include "cuda/block_compaction.cuh"
#include "cuda/cuda_status.h"
#include "cuda/tile_words.cuh"

namespace omnib::gpu {
namespace detail {
namespace {

template <typename E>
struct ScatterArgs {
  const uint64_t* indices;
  uint64_t n;
  const E* values;
  E* out;           // element 0 of the output tensor
  uint64_t count;   // elements in the tensor
  uint64_t begin;   // the block range
  uint64_t end;
  TileShape shape;
};

// Where a tile starts: its first slot (block of the list or of the range)
// and, for blocks cut into chunks, the element of the block it starts at.
struct TilePlace {
  uint64_t first_slot;
  uint32_t chunk_begin;
};

__device__ __forceinline__ TilePlace tile_place(const TileShape& s, uint64_t tile) {
  return {(tile / s.chunks_per_block) * s.blocks_per_tile, (uint32_t)(tile % s.chunks_per_block) * kTileElems};
}

// Element `off` of the tile: its slot relative to first_slot (`local`) and
// its element within that block; false when the tile has no such element.
__device__ __forceinline__ bool element_place(const TileShape& s, const TilePlace& p, uint32_t off, uint32_t& local,
                                              uint32_t& in_block) {
  if (s.chunks_per_block == 1) {
    local = off / s.block_size;
    in_block = off - local * s.block_size;
    return local < s.blocks_per_tile;
  }
  local = 0;
  in_block = p.chunk_begin + off;
  return in_block < s.block_size;
}

template <typename E, int VEC>
__global__ void __launch_bounds__(kThreads) scatter_listed_kernel(ScatterArgs<E> a) {
  constexpr int kItems = kElemsPerThread / VEC;
  const TilePlace place = tile_place(a.shape, blockIdx.x);
  const uint32_t B = a.shape.block_size;
  // Every item's loads are issued before any store: a store may alias a
  // later load as far as the compiler knows, so interleaving them would keep
  // one load in flight per thread instead of kItems.
  Words<E, VEC> v[kItems];
  uint64_t dst[kItems];
  uint32_t len[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    len[i] = 0;
    const uint32_t off = (i * kThreads + threadIdx.x) * VEC;
    uint32_t local, in_block;
    if (!element_place(a.shape, place, off, local, in_block)) continue;
    const uint64_t slot = place.first_slot + local;
    if (slot >= a.n) continue;
    const uint64_t block = a.indices[slot];
    if (block < a.begin || block >= a.end) continue;  // broken precondition: never write outside the range
    dst[i] = block * B + in_block;
    if (dst[i] >= a.count) continue;  // past the short last block
    len[i] = static_cast<uint32_t>(min(static_cast<uint64_t>(VEC), a.count - dst[i]));
    v[i] = load_words<E, VEC>(a.values + slot * B + in_block, len[i]);
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (len[i] > 0) store_words<E, VEC>(a.out + dst[i], v[i], len[i]);
  }
}

// First position of indices[0, n) holding a value >= key, for strictly
// increasing indices inside [begin, end), begin <= key < end. All 32 lanes of
// a warp call it: each round probes 32 evenly spaced positions at once.
__device__ uint64_t warp_lower_bound(const uint64_t* indices, uint64_t n, uint64_t begin, uint64_t end,
                                     uint64_t key) {
  // At most key - begin listed blocks lie below key and at most end - key at
  // or above it; at density 1 this pins the answer without any read.
  uint64_t hi = min(n, key - begin);
  uint64_t lo = n > end - key ? n - (end - key) : 0;
  if (lo > hi) lo = hi;  // only with a broken precondition; stays inside [0, n]
  const unsigned lane = threadIdx.x & 31;
  while (lo < hi) {
    const uint64_t step = (hi - lo + 31) / 32;
    const uint64_t probe = lo + lane * step;
    const bool below = probe < hi && indices[probe] < key;
    const unsigned c = __popc(__ballot_sync(0xffffffffu, below));  // probes below key come first
    if (c == 0) break;                                             // indices[lo] >= key
    const uint64_t next = lo + c * step;  // first probe not below key, when it exists
    if (next < hi) hi = next;
    lo = lo + (c - 1) * step + 1;
  }
  return lo;
}

template <typename E, int VEC>
__global__ void __launch_bounds__(kThreads) scatter_zero_kernel(ScatterArgs<E> a) {
  constexpr int kItems = kElemsPerThread / VEC;
  extern __shared__ int s_source[];  // per block of the tile: listed position minus s_first, or -1
  __shared__ uint64_t s_first;

  const TilePlace place = tile_place(a.shape, blockIdx.x);
  const uint32_t B = a.shape.block_size;
  const uint64_t first_block = a.begin + place.first_slot;
  const uint32_t blocks = static_cast<uint32_t>(min(static_cast<uint64_t>(a.shape.blocks_per_tile), a.end - first_block));
  if (threadIdx.x < 32) {
    const uint64_t first = warp_lower_bound(a.indices, a.n, a.begin, a.end, first_block);
    if (threadIdx.x == 0) s_first = first;
  }
  for (uint32_t b = threadIdx.x; b < blocks; b += kThreads) s_source[b] = -1;
  __syncthreads();
  // Strictly increasing indices: the tile's listed blocks are among the next `blocks` entries.
  const uint64_t first = s_first;
  for (uint32_t j = threadIdx.x; j < blocks && first + j < a.n; j += kThreads) {
    const uint64_t block = a.indices[first + j];
    if (block >= first_block && block < first_block + blocks) s_source[block - first_block] = static_cast<int>(j);
  }
  __syncthreads();

  // Here loads and stores stay interleaved: most items of a sparse result
  // are zeros with no load, and holding every item for a store phase was
  // measured slower (H200: 0.93 -> 0.83 of copy at density 0.01).
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const uint32_t off = (i * kThreads + threadIdx.x) * VEC;
    uint32_t local, in_block;
    if (!element_place(a.shape, place, off, local, in_block) || local >= blocks) continue;
    const uint64_t dst = (first_block + local) * B + in_block;
    if (dst >= a.count) continue;
    const uint32_t len = static_cast<uint32_t>(min(static_cast<uint64_t>(VEC), a.count - dst));
    const int source = s_source[local];
    const Words<E, VEC> w =
        source >= 0 ? load_words<E, VEC>(a.values + (first + source) * B + in_block, len) : zero_words<E, VEC>();
    store_words<E, VEC>(a.out + dst, w, len);
  }
}

template <typename E, int VEC>
Status launch_scatter(const ScatterArgs<E>& args, ScatterMode mode, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(args.shape.tiles);
  if (mode == ScatterMode::kListedOnly) {
    scatter_listed_kernel<E, VEC><<<grid, kThreads, 0, stream>>>(args);
    OMNIB_CUDA_CHECK_LAUNCH("scatter_listed_kernel");
  } else {
    const size_t shared = sizeof(int) * args.shape.blocks_per_tile;
    scatter_zero_kernel<E, VEC><<<grid, kThreads, shared, stream>>>(args);
    OMNIB_CUDA_CHECK_LAUNCH("scatter_zero_kernel");
  }
  return Status::ok();
}

// Fills the arguments for elements of type E and launches with 16-byte
// accesses where the block size and the pointers allow them.
template <typename E>
Status launch_typed(const uint64_t* indices, uint64_t n, const void* values, const BlockLayout& layout,
                    BlockRange range, void* out, ScatterMode mode, uint64_t slots, cudaStream_t stream) {
  ScatterArgs<E> args{};
  args.indices = indices;
  args.n = n;
  args.values = static_cast<const E*>(values);
  args.out = static_cast<E*>(out);
  args.count = layout.count();
  args.begin = range.begin;
  args.end = range.end;
  args.shape = tile_shape(static_cast<uint32_t>(layout.block_size()), slots);
  if (args.shape.tiles > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    return usage_error("GPU scatter: " + std::to_string(slots) + " blocks need more CTAs than a launch allows");
  }
  // With no listed block, `values` may be null: only the output decides the access width.
  const void* values_for_alignment = n > 0 ? values : out;
  if (can_use_vec<E>(args.shape.block_size, values_for_alignment, out)) return launch_scatter<E, kVec<E>>(args, mode, stream);
  return launch_scatter<E, 1>(args, mode, stream);
}

}  // namespace
}  // namespace detail

Status scatter_blocks_async(const uint64_t* indices, uint64_t n, const void* values, size_t elem_size,
                            const BlockLayout& layout, BlockRange range, void* out, ScatterMode mode, Stream stream) {
  OMNIB_RETURN_IF_ERROR(check_block_range(layout, range));
  OMNIB_RETURN_IF_ERROR(check_elem_size(elem_size));
  OMNIB_RETURN_IF_ERROR(check_gpu_block_size(layout).with_context("GPU scatter: "));
  if (n > range.size()) {
    return usage_error("GPU scatter: " + std::to_string(n) + " blocks listed for a range of " +
                       std::to_string(range.size()));
  }
  const bool zero = mode == ScatterMode::kZeroUnlisted;
  const uint64_t slots = zero ? range.size() : n;  // what the tiles run over
  if (slots == 0) return Status::ok();
  if (out == nullptr || (n > 0 && (indices == nullptr || values == nullptr))) {
    return usage_error("GPU scatter: null output, index or value pointer");
  }

  if (elem_size == 2) return detail::launch_typed<uint16_t>(indices, n, values, layout, range, out, mode, slots, stream);
  return detail::launch_typed<uint32_t>(indices, n, values, layout, range, out, mode, slots, stream);
}

}  // namespace omnib::gpu
