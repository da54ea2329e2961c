// CUDA taking: the non-zero elements of compacted blocks, listed on the
// device so that the host packs a batch's bitmap or offsets without reading
// the blocks' values (contract and CPU reference: engine/blocks/block_taking.h).
// Plain C++ (no CUDA header needed); built only with the kernels (omnib_cuda).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/block_compaction.cuh"
#include "cuda/device_buffer.h"
#include "engine/base/status.h"
#include "engine/blocks/block_layout.h"
#include "engine/blocks/block_taking.h"

namespace omnib::gpu {

// Where taking writes: slot j's entries start at j * taken_slot_capacity(B)
// (slot 0 of the range), device memory or mapped pinned host memory.
struct TakenOutputs {
  uint32_t* positions = nullptr;  // of the non-zero elements within their block
  void* values = nullptr;         // the elements, elem_size bytes each
};

// Reads the compaction of `range` that `compacted` holds (its indices,
// non-zero counts and segment counts, as compact_blocks_async left them: the
// launch must follow that compaction on the same stream) and takes, for each
// used slot whose block takes_block allows, its non-zero elements from
// `tensor` into `out`. A warp per slot; a block is read again only while it
// still has elements to give (the rest of a sparse block is skipped).
Status take_block_elements_async(const void* tensor, size_t elem_size, const BlockLayout& layout, BlockRange range,
                                 const CompactionOutputs& compacted, const TakenOutputs& out, Stream stream = nullptr);

}  // namespace omnib::gpu
