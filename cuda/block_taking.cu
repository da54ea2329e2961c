// Taking the non-zero elements of compacted blocks (cuda/block_taking.cuh).
// One warp per slot walks its block 32 elements a ballot, kTakeUnroll
// ballots per round so that that many loads are in flight, and writes each
// non-zero element's position and value at its rank, which the ballot's
// prefix gives: the elements come out in increasing position, as the CPU
// reference (engine/blocks/block_taking.cc) lists them. A warp stops once it
// has found as many elements as the compaction counted.
#include "cuda/block_taking.cuh"

#include <limits>
#include <string>

#include "cuda/cuda_status.h"
#include "cuda/tile_words.cuh"

namespace omnib::gpu {
namespace detail {
namespace {

constexpr int kTakeUnroll = 8;
constexpr unsigned kWarpsPerCta = kThreads / 32;

template <typename E>
struct TakeArgs {
  const E* tensor;                   // element 0
  uint64_t end_elem;                 // one past the range's last element
  uint32_t block_size;
  uint64_t slots;                    // the range's blocks
  uint64_t segment_blocks;
  const uint64_t* indices;           // slot 0 of the range
  const uint32_t* nonzeros;
  const uint32_t* segment_counts;
  uint64_t capacity;                 // entries per slot
  uint32_t* positions;
  E* values;
};

template <typename E>
__global__ void __launch_bounds__(kThreads) take_elements_kernel(TakeArgs<E> a) {
  const uint64_t slot = (static_cast<uint64_t>(blockIdx.x) * kThreads + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x & 31;
  // Every test below is the same on all lanes of a warp: whole warps leave.
  if (slot >= a.slots) return;
  if (slot % a.segment_blocks >= a.segment_counts[slot / a.segment_blocks]) return;  // an unused slot
  const uint32_t count = a.nonzeros[slot];
  const uint64_t begin = a.indices[slot] * a.block_size;
  if (begin >= a.end_elem) return;  // a corrupt slot: never read past the range
  const uint32_t len = static_cast<uint32_t>(min(static_cast<uint64_t>(a.block_size), a.end_elem - begin));
  const uint32_t most = len < kTakeDivisor ? 1 : len / static_cast<uint32_t>(kTakeDivisor);
  if (count > most) return;  // too dense to take (takes_block)
  const E* src = a.tensor + begin;
  uint32_t* pos = a.positions + slot * a.capacity;
  E* val = a.values + slot * a.capacity;
  const unsigned below = (1u << lane) - 1;
  uint32_t written = 0;
  // len <= 2^31 (kMaxGpuBlockSize), so base + 32 * kTakeUnroll cannot wrap.
  for (uint32_t base = 0; base < len && written < count; base += 32 * kTakeUnroll) {
    E v[kTakeUnroll];
#pragma unroll
    for (int k = 0; k < kTakeUnroll; ++k) {
      const uint32_t i = base + k * 32 + lane;
      v[k] = i < len ? __ldcs(src + i) : E{0};
    }
#pragma unroll
    for (int k = 0; k < kTakeUnroll; ++k) {
      const bool nonzero = (v[k] & kMagnitude<E>) != 0;
      const unsigned mask = __ballot_sync(0xffffffffu, nonzero);
      const uint32_t rank = written + __popc(mask & below);
      if (nonzero && rank < count) {  // a count that was short never writes past the slot
        pos[rank] = base + k * 32 + lane;
        val[rank] = v[k];
      }
      written += __popc(mask);
    }
  }
}

template <typename E>
Status launch_typed(const void* tensor, const BlockLayout& layout, BlockRange range, const CompactionOutputs& compacted,
                    const TakenOutputs& out, cudaStream_t stream) {
  TakeArgs<E> args{};
  args.tensor = static_cast<const E*>(tensor);
  args.end_elem = layout.block_begin(range.begin) + layout.elements_in(range);
  args.block_size = static_cast<uint32_t>(layout.block_size());
  args.slots = range.size();
  args.segment_blocks = compaction_segment_blocks(layout, sizeof(E));
  args.indices = compacted.indices;
  args.nonzeros = compacted.nonzeros;
  args.segment_counts = compacted.segment_counts;
  args.capacity = taken_slot_capacity(layout.block_size());
  args.positions = out.positions;
  args.values = static_cast<E*>(out.values);
  const uint64_t ctas = (args.slots + kWarpsPerCta - 1) / kWarpsPerCta;
  if (ctas > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    return usage_error("GPU taking: range of " + std::to_string(range.size()) +
                       " blocks needs more CTAs than a launch allows");
  take_elements_kernel<E><<<static_cast<unsigned>(ctas), kThreads, 0, stream>>>(args);
  OMNIB_CUDA_CHECK_LAUNCH("take_elements_kernel");
  return Status::ok();
}

}  // namespace
}  // namespace detail

Status take_block_elements_async(const void* tensor, size_t elem_size, const BlockLayout& layout, BlockRange range,
                                 const CompactionOutputs& compacted, const TakenOutputs& out, Stream stream) {
  OMNIB_RETURN_IF_ERROR(check_block_range(layout, range));
  OMNIB_RETURN_IF_ERROR(check_elem_size(elem_size));
  OMNIB_RETURN_IF_ERROR(check_gpu_block_size(layout).with_context("GPU taking: "));
  if (range.size() == 0) return Status::ok();
  if (tensor == nullptr || compacted.indices == nullptr || compacted.nonzeros == nullptr ||
      compacted.segment_counts == nullptr || out.positions == nullptr || out.values == nullptr)
    return usage_error("GPU taking: null tensor or output pointer");
  if (elem_size == 2)
    return detail::launch_typed<uint16_t>(tensor, layout, range, compacted, out, stream);
  return detail::launch_typed<uint32_t>(tensor, layout, range, compacted, out, stream);
}

}  // namespace omnib::gpu
