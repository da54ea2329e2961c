// Taking the non-zero elements of compacted blocks: the contract of the CUDA
// kernel that does it on the device (cuda/block_taking.cuh), and its CPU
// reference, against which the kernel is tested.
//
// A compaction in segments (cuda/block_compaction.cuh) leaves, per slot, a
// block's index and its count of non-zero elements. Taking writes, for each
// used slot whose block is sparse enough to take (takes_block in
// found_elements.h, the rule the host scan follows), the positions of its
// non-zero elements within the block, in increasing order, and their values:
// slot j's go from entry j * taken_slot_capacity(B) of `positions` and
// `values`. The host then packs a batch's bitmap or offsets from those
// (batch_encoding.h, pack_sparse_taken) without reading the block's values.
// Entries of other slots are left as they are.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/base/status.h"
#include "engine/blocks/block_layout.h"
#include "engine/blocks/found_elements.h"

namespace omnib {

// The most elements takes_block lets a block of up to `block_size` elements
// have taken: the entries each slot owns.
inline uint64_t taken_slot_capacity(uint64_t block_size) {
  return block_size < kTakeDivisor ? 1 : block_size / kTakeDivisor;
}

// The per-slot outputs of a compaction of a block range, as taking reads them.
struct CompactedSlots {
  const uint64_t* indices = nullptr;         // slot 0 of the range
  const uint32_t* nonzeros = nullptr;        // per slot
  const uint32_t* segment_counts = nullptr;  // slots used, per segment
  uint64_t segment_blocks = 1;               // slots per segment
};

// CPU reference: takes the elements of the sparse compacted blocks of
// `range` from `tensor` (elements of elem_size bytes, 2 or 4) into
// `positions` and `values` (range.size() * taken_slot_capacity entries). A
// slot whose count disagrees with its block is an internal error.
Status take_compacted_elements(const void* tensor, size_t elem_size, const BlockLayout& layout, BlockRange range,
                               const CompactedSlots& slots, uint32_t* positions, void* values);

}  // namespace omnib
