// CUDA block compaction and scatter: host launchers of the kernels that
// implement the contract of engine/blocks/block_compaction.h on device tensors.
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

// Device scratch (bytes) that compact_blocks_async needs for `range`: the
// per-tile states of the single-pass scan. A few bytes per 16 KiB of tensor.
size_t compact_scratch_bytes(const BlockLayout& layout, BlockRange range);

// One pass over the device tensor at `tensor`, of elements of `elem_size`
// bytes (4, or 2 for bf16 and half): writes the indices of the
// non-zero blocks of `range` in increasing order to `indices` (room for
// range.size()), their values packed to `values` (room for
// compacted_values_capacity() elements) and their number to `*count`.
// `scratch` holds compact_scratch_bytes() of 8-byte aligned device memory
// (a DeviceBuffer), which this call reinitializes on `stream`: launches that
// share a scratch must be on one stream or otherwise serialized.
Status compact_blocks_async(const void* tensor, size_t elem_size, const BlockLayout& layout, BlockRange range,
                            void* scratch, size_t scratch_bytes, uint64_t* indices, void* values, uint64_t* count,
                            Stream stream = nullptr);

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
