// Block compaction in one pass over the device tensor, in independent
// segments (cuda/block_compaction.cuh). Every element is loaded once into
// registers; a segment's non-zero blocks are ranked in shared memory and
// written from the registers to the segment's own slots, in index order,
// with their counts of non-zero elements (CompactionMode::kEveryBlock lists
// zero blocks too: a copy with counts). No CTA waits for another.
//
// Two strategies by block size:
//  - B <= kCompactTileElems<E> (8192 4-byte or 16384 2-byte elements): a CTA
//    holds one segment of blocks_per_tile whole blocks.
//  - B >  kCompactTileElems<E>: a CTA streams one block (a segment of one)
//    in chunks of that size. Until it meets the first non-zero element nothing
//    is written; from there it writes zeros for the chunks it already passed
//    (they were all zero: no need to read them again, unless one held a
//    -0.0, whose bits must be kept) and copies each chunk as it loads it.
#include "cuda/block_compaction.cuh"

#include <algorithm>
#include <limits>
#include <string>

#include "cuda/cuda_status.h"
#include "cuda/tile_words.cuh"

namespace omnib::gpu {
namespace detail {
namespace {

template <typename E>
struct CompactArgs {
  const E* tensor;           // element 0
  uint64_t begin;            // first block of the range
  uint64_t end;              // one past the last block
  uint64_t end_elem;         // one past the range's last element
  uint32_t block_size;
  uint32_t blocks_per_tile;  // blocks per segment
  uint64_t* indices;         // slot 0 of the range
  E* values;
  uint32_t* nonzeros;
  uint32_t* segment_counts;
  bool every_block;  // list zero blocks too (CompactionMode::kEveryBlock)
};

// Strategy 1: one segment of blocks_per_tile whole blocks per CTA. Dynamic
// shared memory holds one int per block of the segment: first its count of
// non-zero elements, then (count << 5 | rank within its 32-block word), or -1
// for a zero block. A count is at most B <= kCompactTileElems<E> (2^14), so
// both fit.
template <typename E, int VEC>
__global__ void __launch_bounds__(kThreads) compact_small_blocks_kernel(CompactArgs<E> a) {
  constexpr int kItems = kCompactElemsPerThread<E> / VEC;
  constexpr int kWords = kCompactMaxTileBlocks / 32;  // 32-block words of flags in the largest tile
  extern __shared__ int s_block[];
  __shared__ unsigned s_word_offset[kWords];

  const unsigned tid = threadIdx.x;
  const unsigned lane = tid & 31;
  const unsigned warp = tid >> 5;
  const uint64_t tile = blockIdx.x;
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

  for (uint32_t b = tid; b < blocks; b += kThreads) s_block[b] = 0;
  __syncthreads();
  // Count each block's non-zero elements. An item never straddles two blocks
  // (VEC > 1 only when B % VEC == 0).
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const uint32_t off = (i * kThreads + tid) * VEC;
    if (off >= tile_len) continue;
    const uint32_t n = nonzero_elements(v[i]);
    if (n != 0) atomicAdd(&s_block[off / B], static_cast<int>(n));
  }
  __syncthreads();

  // Rank the non-zero blocks: a ballot per 32-block word gives ranks within the word...
  for (uint32_t base = 0; base < blocks; base += kThreads) {
    const uint32_t b = base + tid;
    const int count = b < blocks ? s_block[b] : 0;
    const bool listed = b < blocks && (count != 0 || a.every_block);
    const unsigned mask = __ballot_sync(0xffffffffu, listed);
    if (b < blocks) s_block[b] = listed ? (count << 5) | __popc(mask & ((1u << lane) - 1)) : -1;
    if (lane == 0) s_word_offset[(base >> 5) + warp] = __popc(mask);
  }
  __syncthreads();
  // ...then one warp turns the word counts into offsets within the segment.
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
    unsigned running = inclusive - lane_sum;
#pragma unroll
    for (int j = 0; j < kWordsPerLane; ++j) {
      const uint32_t w = lane * kWordsPerLane + j;
      if (w < words) s_word_offset[w] = running;
      running += counts[j];
    }
    if (lane == 31) a.segment_counts[tile] = inclusive;
  }
  __syncthreads();

  const uint64_t first_slot = tile * a.blocks_per_tile;
  for (uint32_t b = tid; b < blocks; b += kThreads) {
    const int ranked = s_block[b];
    if (ranked < 0) continue;
    const uint64_t slot = first_slot + s_word_offset[b >> 5] + (ranked & 31);
    a.indices[slot] = first_block + b;
    a.nonzeros[slot] = static_cast<uint32_t>(ranked >> 5);
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const uint32_t off = (i * kThreads + tid) * VEC;
    if (off >= tile_len) continue;
    const uint32_t b = off / B;
    const int ranked = s_block[b];
    if (ranked < 0) continue;
    const uint64_t slot = first_slot + s_word_offset[b >> 5] + (ranked & 31);
    store_words<E, VEC>(a.values + slot * B + (off - b * B), v[i], min(uint32_t(VEC), tile_len - off));
  }
}

// Strategy 2: one block per CTA, streamed in chunks of kCompactTileElems<E>;
// the block's segment is its own slot.
template <typename E, int VEC>
__global__ void __launch_bounds__(kThreads) compact_large_blocks_kernel(CompactArgs<E> a) {
  constexpr int kItems = kCompactElemsPerThread<E> / VEC;
  constexpr uint32_t kChunk = kCompactTileElems<E>;
  __shared__ int s_signed_zero;  // a chunk passed as zero held a -0.0
  __shared__ unsigned s_nonzeros;

  const unsigned tid = threadIdx.x;
  if (tid == 0) {
    s_signed_zero = 0;
    s_nonzeros = 0;
  }
  __syncthreads();
  const uint64_t slot = blockIdx.x;
  const uint32_t B = a.block_size;
  const uint64_t block = a.begin + slot;
  const uint64_t block_begin = block * B;
  const uint32_t len = static_cast<uint32_t>(min(static_cast<uint64_t>(B), a.end_elem - block_begin));
  const E* src = a.tensor + block_begin;
  E* out = a.values + slot * B;

  bool found = a.every_block;  // same on every thread: it only changes after a barrier
  uint32_t nonzeros = 0;
  // len <= kMaxGpuBlockSize = 2^31, so chunk + kChunk cannot wrap.
  for (uint32_t chunk = 0; chunk < len; chunk += kChunk) {
    const uint32_t chunk_len = min(kChunk, len - chunk);
    Words<E, VEC> v[kItems];
    bool any_bits = false;
    uint32_t mine = 0;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const uint32_t off = (i * kThreads + tid) * VEC;
      v[i] = off < chunk_len ? load_words<E, VEC>(src + chunk + off, min(uint32_t(VEC), chunk_len - off))
                             : zero_words<E, VEC>();
      mine += nonzero_elements(v[i]);
      any_bits |= !all_bits_zero(v[i]);
    }
    nonzeros += mine;
    if (!found) {
      if (!__syncthreads_or(mine != 0)) {  // still all zero: nothing to write
        if (any_bits) s_signed_zero = 1;
        continue;
      }
      found = true;
      // The chunks before this one held only zeros: write them without reading
      // them again, unless one held a -0.0, whose bits the output must keep
      // (rare: then they are copied). chunk is a multiple of kChunk, so of VEC.
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
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) nonzeros += __shfl_xor_sync(0xffffffffu, nonzeros, offset);
  if ((tid & 31) == 0 && nonzeros != 0) atomicAdd(&s_nonzeros, nonzeros);
  __syncthreads();
  if (tid == 0) {
    a.segment_counts[slot] = found ? 1 : 0;
    if (found) {
      a.indices[slot] = block;
      a.nonzeros[slot] = s_nonzeros;
    }
  }
}

template <typename E, int VEC>
Status launch_compaction(const CompactArgs<E>& args, uint64_t tiles, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(tiles);
  if (args.block_size <= kCompactTileElems<E>) {
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
Status launch_typed(const void* tensor, const BlockLayout& layout, BlockRange range, const CompactionOutputs& out,
                    bool every_block, cudaStream_t stream) {
  CompactArgs<E> args{};
  args.tensor = static_cast<const E*>(tensor);
  args.begin = range.begin;
  args.end = range.end;
  args.end_elem = layout.block_begin(range.begin) + layout.elements_in(range);
  args.block_size = static_cast<uint32_t>(layout.block_size());
  args.blocks_per_tile = static_cast<uint32_t>(compaction_segment_blocks(layout, sizeof(E)));
  args.indices = out.indices;
  args.values = static_cast<E*>(out.values);
  args.nonzeros = out.nonzeros;
  args.segment_counts = out.segment_counts;
  args.every_block = every_block;
  const uint64_t tiles = compaction_segments(layout, sizeof(E), range);
  if (tiles > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    return usage_error("GPU compaction: range of " + std::to_string(range.size()) +
                       " blocks needs more CTAs than a launch allows");
  }
  if (can_use_vec<E>(args.block_size, tensor, out.values)) return launch_compaction<E, kVec<E>>(args, tiles, stream);
  return launch_compaction<E, 1>(args, tiles, stream);
}

}  // namespace
}  // namespace detail

Status check_gpu_block_size(const BlockLayout& layout) {
  if (layout.block_size() <= kMaxGpuBlockSize) return Status::ok();
  return usage_error("block size " + std::to_string(layout.block_size()) +
                     " is above the GPU kernels' limit of 2^31 elements: pass a smaller --block-size");
}

uint64_t compaction_segment_blocks(const BlockLayout& layout, size_t elem_size) {
  const uint64_t block_size = layout.block_size();
  if (block_size == 0) return 0;
  const uint64_t tile = elem_size == 2 ? detail::kCompactTileElems<uint16_t> : detail::kCompactTileElems<uint32_t>;
  return block_size <= tile ? std::min<uint64_t>(tile / block_size, detail::kCompactMaxTileBlocks) : 1;
}

uint64_t compaction_segments(const BlockLayout& layout, size_t elem_size, BlockRange range) {
  const uint64_t per_segment = compaction_segment_blocks(layout, elem_size);
  if (per_segment == 0 || range.end <= range.begin) return 0;
  return (range.size() + per_segment - 1) / per_segment;
}

Status compact_blocks_async(const void* tensor, size_t elem_size, const BlockLayout& layout, BlockRange range,
                            const CompactionOutputs& out, Stream stream, CompactionMode mode) {
  OMNIB_RETURN_IF_ERROR(check_block_range(layout, range));
  OMNIB_RETURN_IF_ERROR(check_elem_size(elem_size));
  OMNIB_RETURN_IF_ERROR(check_gpu_block_size(layout).with_context("GPU compaction: "));
  if (range.size() == 0) return Status::ok();  // no segment, nothing to write
  if (tensor == nullptr || out.indices == nullptr || out.values == nullptr || out.nonzeros == nullptr ||
      out.segment_counts == nullptr) {
    return usage_error("GPU compaction: null tensor or output pointer");
  }
  const bool every_block = mode == CompactionMode::kEveryBlock;
  if (elem_size == 2) return detail::launch_typed<uint16_t>(tensor, layout, range, out, every_block, stream);
  return detail::launch_typed<uint32_t>(tensor, layout, range, out, every_block, stream);
}

}  // namespace omnib::gpu
