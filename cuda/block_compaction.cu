// Block compaction in one pass over the device tensor (contract:
// engine/blocks/block_compaction.h). Every element is loaded once into registers;
// the tile's non-zero blocks are ranked in shared memory, the tile's output
// offset comes from the single-pass look-back scan (tile_prefix.cuh), and the
// blocks and indices are written from the registers, in index order.
//
// Two strategies by block size:
//  - B <= kCompactTileElems: a CTA holds blocks_per_tile whole blocks.
//  - B >  kCompactTileElems: a CTA streams one block in chunks of that size. Until it
//    meets the first non-zero element nothing is written; then it learns its
//    output slot (look-back), writes zeros for the chunks it already passed
//    (they were all zero: no need to read them again, unless one held a -0.0,
//    whose bits must be kept) and from there copies each chunk as it loads
//    it. Any block size up to 2^32-1 works.
#include "cuda/block_compaction.cuh"

#include <algorithm>
#include <limits>
#include <string>

#include "cuda/cuda_status.h"
#include "cuda/tile_prefix.cuh"
#include "cuda/tile_words.cuh"

namespace omnib::gpu {
namespace detail {
namespace {

template <typename E>
struct CompactArgs {
  const E* tensor;          // element 0
  uint64_t begin;           // first block of the range
  uint64_t end;             // one past the last block
  uint64_t end_elem;        // one past the range's last element
  uint32_t block_size;
  uint32_t blocks_per_tile;
  uint64_t tiles;
  TileScratch scratch;
  uint64_t* indices;
  E* values;
  uint64_t* count;
};

// Strategy 1: blocks_per_tile whole blocks per CTA. Dynamic shared memory
// holds one int per block of the tile.
template <typename E, int VEC>
__global__ void __launch_bounds__(kThreads) compact_small_blocks_kernel(CompactArgs<E> a) {
  constexpr int kItems = kCompactElemsPerThread / VEC;
  constexpr int kWords = kCompactTileElems / 32;  // 32-block words of flags in the largest tile
  extern __shared__ int s_rank[];          // per block: -1 (zero) or rank within its 32-block word
  __shared__ unsigned s_word_offset[kWords];
  __shared__ uint64_t s_tile;
  __shared__ uint64_t s_prefix;

  const unsigned tid = threadIdx.x;
  const unsigned lane = tid & 31;
  const unsigned warp = tid >> 5;
  if (tid == 0) s_tile = take_tile_number(a.scratch);
  __syncthreads();
  const uint64_t tile = s_tile;
  const uint32_t B = a.block_size;
  const uint64_t first_block = a.begin + tile * a.blocks_per_tile;
  const uint32_t blocks = static_cast<uint32_t>(min(static_cast<uint64_t>(a.blocks_per_tile), a.end - first_block));
  const uint64_t tile_begin = first_block * B;
  const uint32_t tile_len = static_cast<uint32_t>(min((first_block + blocks) * B, a.end_elem) - tile_begin);

  // The one read of the tile, coalesced: item i of thread t is at (i * kThreads + t) * VEC.
  Words<E, VEC> v[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const uint32_t off = (i * kThreads + tid) * VEC;
    v[i] = off < tile_len ? load_words<E, VEC>(a.tensor + tile_begin + off, min(uint32_t(VEC), tile_len - off))
                          : zero_words<E, VEC>();
  }

  for (uint32_t b = tid; b < blocks; b += kThreads) s_rank[b] = 0;
  __syncthreads();
  // Mark the non-zero blocks. An item never straddles two blocks (VEC > 1
  // only when B % VEC == 0), and racing writers all store 1.
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const uint32_t off = (i * kThreads + tid) * VEC;
    if (off < tile_len && any_nonzero(v[i])) s_rank[off / B] = 1;
  }
  __syncthreads();

  // Rank the flags: a ballot per 32-block word gives ranks within the word...
  for (uint32_t base = 0; base < blocks; base += kThreads) {
    const uint32_t b = base + tid;
    const bool flag = b < blocks && s_rank[b] != 0;
    const unsigned mask = __ballot_sync(0xffffffffu, flag);
    if (b < blocks) s_rank[b] = flag ? __popc(mask & ((1u << lane) - 1)) : -1;
    if (lane == 0) s_word_offset[(base >> 5) + warp] = __popc(mask);
  }
  __syncthreads();
  // ...then one warp scans the word counts and gets the tile's output offset.
  if (warp == 0) {
    constexpr int kWordsPerLane = kWords / 32;
    const uint32_t words = (blocks + 31) / 32;
    unsigned counts[kWordsPerLane];
    unsigned lane_sum = 0;
#pragma unroll
    for (int j = 0; j < kWordsPerLane; ++j) {
      const uint32_t w = lane * kWordsPerLane + j;
      counts[j] = w < words ? s_word_offset[w] : 0;
      lane_sum += counts[j];
    }
    unsigned inclusive = lane_sum;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
      const unsigned up = __shfl_up_sync(0xffffffffu, inclusive, offset);
      if (lane >= static_cast<unsigned>(offset)) inclusive += up;
    }
    const unsigned tile_count = __shfl_sync(0xffffffffu, inclusive, 31);
    unsigned running = inclusive - lane_sum;
#pragma unroll
    for (int j = 0; j < kWordsPerLane; ++j) {
      const uint32_t w = lane * kWordsPerLane + j;
      if (w < words) s_word_offset[w] = running;
      running += counts[j];
    }
    const uint64_t prefix = tile_exclusive_prefix(a.scratch, tile, tile_count);
    if (lane == 0) {
      s_prefix = prefix;
      if (tile == a.tiles - 1) *a.count = prefix + tile_count;
    }
  }
  __syncthreads();

  const uint64_t prefix = s_prefix;
  for (uint32_t b = tid; b < blocks; b += kThreads) {
    const int rank = s_rank[b];
    if (rank >= 0) a.indices[prefix + s_word_offset[b >> 5] + rank] = first_block + b;
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const uint32_t off = (i * kThreads + tid) * VEC;
    if (off >= tile_len) continue;
    const uint32_t b = off / B;
    const int rank = s_rank[b];
    if (rank < 0) continue;
    const uint64_t slot = prefix + s_word_offset[b >> 5] + rank;
    store_words<E, VEC>(a.values + slot * B + (off - b * B), v[i], min(uint32_t(VEC), tile_len - off));
  }
}

// Strategy 2: one block per CTA, streamed in chunks of kCompactTileElems.
template <typename E, int VEC>
__global__ void __launch_bounds__(kThreads) compact_large_blocks_kernel(CompactArgs<E> a) {
  constexpr int kItems = kCompactElemsPerThread / VEC;
  __shared__ uint64_t s_tile;
  __shared__ uint64_t s_prefix;
  __shared__ int s_signed_zero;  // a chunk passed as zero held a -0.0

  const unsigned tid = threadIdx.x;
  const unsigned lane = tid & 31;
  const unsigned warp = tid >> 5;
  if (tid == 0) {
    s_tile = take_tile_number(a.scratch);
    s_signed_zero = 0;
  }
  __syncthreads();
  const uint64_t tile = s_tile;
  const uint32_t B = a.block_size;
  const uint64_t block = a.begin + tile;
  const uint64_t block_begin = block * B;
  const uint32_t len = static_cast<uint32_t>(min(static_cast<uint64_t>(B), a.end_elem - block_begin));
  const E* src = a.tensor + block_begin;

  bool found = false;  // same on every thread: it only changes after a barrier
  E* out = nullptr;
  for (uint32_t chunk = 0; chunk < len; chunk += kCompactTileElems) {
    const uint32_t chunk_len = min(kCompactTileElems, len - chunk);
    Words<E, VEC> v[kItems];
    bool mine = false, any_bits = false;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const uint32_t off = (i * kThreads + tid) * VEC;
      v[i] = off < chunk_len ? load_words<E, VEC>(src + chunk + off, min(uint32_t(VEC), chunk_len - off))
                             : zero_words<E, VEC>();
      mine |= any_nonzero(v[i]);
      any_bits |= !all_bits_zero(v[i]);
    }
    if (!found) {
      if (!__syncthreads_or(mine)) {  // still all zero: nothing to write
        if (any_bits) s_signed_zero = 1;
        continue;
      }
      found = true;
      if (warp == 0) {
        const uint64_t prefix = tile_exclusive_prefix(a.scratch, tile, 1);
        if (lane == 0) {
          s_prefix = prefix;
          a.indices[prefix] = block;
          if (tile == a.tiles - 1) *a.count = prefix + 1;
        }
      }
      __syncthreads();
      out = a.values + s_prefix * B;
      // The chunks before this one held only zeros: write them without reading
      // them again, unless one held a -0.0, whose bits the output must keep
      // (rare: then they are copied). chunk is a multiple of kCompactTileElems, so of VEC.
      if (s_signed_zero == 0) {
        for (uint32_t e = tid * VEC; e < chunk; e += kThreads * VEC)
          store_words<E, VEC>(out + e, zero_words<E, VEC>(), VEC);
      } else {
        for (uint32_t e = tid * VEC; e < chunk; e += kThreads * VEC)
          store_words<E, VEC>(out + e, load_words<E, VEC>(src + e, VEC), VEC);
      }
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const uint32_t off = (i * kThreads + tid) * VEC;
      if (off < chunk_len) store_words<E, VEC>(out + chunk + off, v[i], min(uint32_t(VEC), chunk_len - off));
    }
  }
  if (!found && warp == 0) {
    const uint64_t prefix = tile_exclusive_prefix(a.scratch, tile, 0);
    if (lane == 0 && tile == a.tiles - 1) *a.count = prefix;
  }
}

__global__ void write_count_kernel(uint64_t* count, uint64_t value) { *count = value; }

template <typename E, int VEC>
Status launch_compaction(const CompactArgs<E>& args, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(args.tiles);
  if (args.block_size <= kCompactTileElems) {
    const size_t shared = sizeof(int) * args.blocks_per_tile;
    compact_small_blocks_kernel<E, VEC><<<grid, kThreads, shared, stream>>>(args);
    OMNIB_CUDA_CHECK_LAUNCH("compact_small_blocks_kernel");
  } else {
    compact_large_blocks_kernel<E, VEC><<<grid, kThreads, 0, stream>>>(args);
    OMNIB_CUDA_CHECK_LAUNCH("compact_large_blocks_kernel");
  }
  return Status::ok();
}

// Fills the arguments for elements of type E and launches with 16-byte
// accesses where the block size and the pointers allow them.
template <typename E>
Status launch_typed(const void* tensor, const BlockLayout& layout, BlockRange range, void* scratch, uint64_t* indices,
                    void* values, uint64_t* count, cudaStream_t stream) {
  CompactArgs<E> args{};
  args.tensor = static_cast<const E*>(tensor);
  args.begin = range.begin;
  args.end = range.end;
  args.end_elem = layout.block_begin(range.begin) + layout.elements_in(range);
  args.block_size = static_cast<uint32_t>(layout.block_size());
  args.blocks_per_tile = args.block_size <= kCompactTileElems ? kCompactTileElems / args.block_size : 1;
  args.tiles = (range.size() + args.blocks_per_tile - 1) / args.blocks_per_tile;
  if (args.tiles > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    return usage_error("GPU compaction: range of " + std::to_string(range.size()) +
                       " blocks needs more CTAs than a launch allows");
  }
  args.scratch = tile_scratch(scratch);
  args.indices = indices;
  args.values = static_cast<E*>(values);
  args.count = count;
  if (can_use_vec<E>(args.block_size, tensor, values)) return launch_compaction<E, kVec<E>>(args, stream);
  return launch_compaction<E, 1>(args, stream);
}

}  // namespace
}  // namespace detail

size_t compact_scratch_bytes(const BlockLayout& layout, BlockRange range) {
  if (layout.block_size() == 0 || range.end < range.begin) return detail::tile_scratch_bytes(0);
  const uint32_t block_size = static_cast<uint32_t>(std::min<size_t>(layout.block_size(), UINT32_MAX));
  // Large blocks are one tile each (one CTA streams the whole block).
  const uint64_t tiles = block_size <= detail::kCompactTileElems
                             ? detail::tile_shape(block_size, range.size(), detail::kCompactTileElems).tiles
                             : range.size();
  return detail::tile_scratch_bytes(tiles);
}

Status compact_blocks_async(const void* tensor, size_t elem_size, const BlockLayout& layout, BlockRange range,
                            void* scratch, size_t scratch_bytes, uint64_t* indices, void* values, uint64_t* count,
                            Stream stream) {
  OMNIB_RETURN_IF_ERROR(check_block_range(layout, range));
  OMNIB_RETURN_IF_ERROR(check_elem_size(elem_size));
  if (layout.block_size() > UINT32_MAX) {
    return usage_error("GPU compaction: block size " + std::to_string(layout.block_size()) +
                       " is above the kernels' limit of 2^32-1 elements");
  }
  if (count == nullptr) return usage_error("GPU compaction: no count output");
  if (range.size() == 0) {
    detail::write_count_kernel<<<1, 1, 0, stream>>>(count, 0);
    OMNIB_CUDA_CHECK_LAUNCH("write_count_kernel");
    return Status::ok();
  }
  if (tensor == nullptr || indices == nullptr || values == nullptr || scratch == nullptr) {
    return usage_error("GPU compaction: null tensor, scratch or output pointer");
  }
  if (reinterpret_cast<uintptr_t>(scratch) % alignof(detail::TileState) != 0) {
    return usage_error("GPU compaction: scratch must be 8-byte aligned");
  }
  const size_t needed = compact_scratch_bytes(layout, range);
  if (scratch_bytes < needed) {
    return usage_error("GPU compaction: scratch of " + std::to_string(scratch_bytes) + " bytes, " +
                       std::to_string(needed) + " needed (compact_scratch_bytes)");
  }

  // Tile states start invalid and the tile counter at 0 on every launch.
  OMNIB_CUDA_TRY(cudaMemsetAsync(scratch, 0, needed, stream));
  if (elem_size == 2)
    return detail::launch_typed<uint16_t>(tensor, layout, range, scratch, indices, values, count, stream);
  return detail::launch_typed<uint32_t>(tensor, layout, range, scratch, indices, values, count, stream);
}

}  // namespace omnib::gpu
