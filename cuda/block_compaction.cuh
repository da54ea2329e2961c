// CUDA block compaction and scatter: host launchers of the kernels that
// implement the contract of engine/blocks/block_compaction.h on device
// tensors (the compaction in segments, below).
// Plain C++ (no CUDA header needed), so the harness can include it; built
// only when OMNIB_HAVE_CUDA_KERNELS is defined (library omnib_cuda).
//
// Pointers are device-accessible: device memory, or mapped pinned host memory
// (PinnedBuffer::device()), e.g. compaction output written straight into the
// transport's send buffer. Launches are asynchronous on `stream`: outputs are
// valid once the stream reaches them (synchronize() or an event). Arguments
// are checked on the host; a failing CUDA call returns kUnavailable.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/device_buffer.h"
#include "engine/blocks/block_compaction.h"
#include "engine/blocks/block_layout.h"
#include "engine/base/status.h"

namespace omnib::gpu {

// Usage error naming the limit (kMaxGpuBlockSize, block_compaction.h) when
// the layout's blocks are larger.
Status check_gpu_block_size(const BlockLayout& layout);

// Compaction in segments. The range is cut into segments of
// compaction_segment_blocks() consecutive blocks (one CTA's tile of 32 KiB;
// a single block when blocks are larger than a tile). Segment s covers blocks
// [range.begin + s*S, range.begin + (s+1)*S) (the last one fewer) and owns
// output slots [s*S, (s+1)*S): its non-zero blocks fill its first slots in
// increasing index order. Slot j holds a block's index in indices[j], its
// count of non-zero elements in nonzeros[j] and its values from element j*B
// of `values` (B the block size; the tensor's short last block writes only
// its real elements); segment_counts[s] says how many slots segment s used.
// Segments never wait for each other: there is no scan across the tensor, so
// the kernel streams at close to read bandwidth, and a batch sent from one
// segment's slots is contiguous in memory.
struct CompactionOutputs {
  uint64_t* indices = nullptr;         // range.size() slots
  void* values = nullptr;              // compacted_values_capacity(layout, range) elements
  uint32_t* nonzeros = nullptr;        // range.size() slots
  uint32_t* segment_counts = nullptr;  // compaction_segments(layout, range) entries
};

// Blocks per segment for this layout and element size (0 for a layout
// without blocks), and the segments of a range.
uint64_t compaction_segment_blocks(const BlockLayout& layout, size_t elem_size);
uint64_t compaction_segments(const BlockLayout& layout, size_t elem_size, BlockRange range);

// Which blocks a compaction lists: the non-zero ones, or every block (a
// dense send: the output is then a copy of the range, with the counts).
enum class CompactionMode { kNonZeroBlocks, kEveryBlock };

// One pass over the device tensor at `tensor` (elements of `elem_size`
// bytes: 4, or 2 for bf16 and half) that writes the segmented compaction of
// `range` to `out` (device memory, or mapped pinned host memory for the
// transport to send from). No scratch: launches on different streams may run
// at once on disjoint outputs.
Status compact_blocks_async(const void* tensor, size_t elem_size, const BlockLayout& layout, BlockRange range,
                            const CompactionOutputs& out, Stream stream = nullptr,
                            CompactionMode mode = CompactionMode::kNonZeroBlocks);

// Host side: calls visit(slot) for every used slot of segments [first, last)
// of a compaction whose segment_counts the host can read, in index order.
template <typename Visit>
void for_each_compacted_slot(const uint32_t* segment_counts, uint64_t segment_blocks, uint64_t first, uint64_t last,
                             Visit&& visit) {
  for (uint64_t s = first; s < last; ++s)
    for (uint64_t j = 0; j < segment_counts[s]; ++j) visit(s * segment_blocks + j);
}

// Writes the `n` packed blocks (`indices`, `values`, elements of elem_size
// bytes) into the device tensor at `out`, in place or into a separate output; with kZeroUnlisted every other
// block of `range` is zeroed too. The indices must be strictly increasing and
// inside `range` (check_block_indices, e.g. when the batch was decoded):
// they are read on the device, where an index outside `range` is skipped
// rather than written, but an unordered list gives unspecified results.
// Keep `indices` in device memory: the zeroing kernel searches them.
Status scatter_blocks_async(const uint64_t* indices, uint64_t n, const void* values, size_t elem_size,
                            const BlockLayout& layout, BlockRange range, void* out, ScatterMode mode,
                            Stream stream = nullptr);

}  // namespace omnib::gpu
