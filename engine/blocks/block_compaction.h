// Block compaction and scatter: the contract shared by the CPU reference
// (block_compaction_cpu.cc, also the --device cpu fallback) and the CUDA
// kernels (cuda/block_compaction.cuh), which are tested against it.
//
// A tensor of `count` elements of `elem_size` bytes (4: float, int32; 2:
// bf16, half) is cut into blocks by a BlockLayout; only the tensor's last
// block may be short. All work is over a block range [begin, end) of that
// layout.
//
// Packed form (the block part of a batch, see engine/omni/block_batch.h):
//   indices  uint64, strictly increasing block indices inside the range
//   values   the listed blocks' elements back to back, in index order: the
//            k-th listed block starts at element k * block_size; the tensor's
//            short last block packs only its real elements.
//
// A block is non-zero when one of its elements has a bit set other than its
// sign bit ((bits & 0x7fffffff) != 0 for 4 bytes, (bits & 0x7fff) != 0 for
// 2): a float -0.0 counts as zero (so does an int32 of INT32_MIN, which
// workloads never produce). Elements are moved as raw bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/blocks/block_layout.h"
#include "engine/base/status.h"

namespace omnib {

enum class ScatterMode {
  kListedOnly,    // write the listed blocks; leave every other element as it is
  kZeroUnlisted,  // also zero every block of the range that is not listed
};

// The largest block the CUDA kernels (cuda/) take, for callers of the API
// (the CLI caps --block-size far lower): 2^31 elements, so that
// block, chunk and tile arithmetic in 32 bits cannot wrap (a wrapped chunk
// counter would never end, and the GPU would hang).
inline constexpr uint64_t kMaxGpuBlockSize = uint64_t{1} << 31;

// Elements a values buffer needs to hold any compaction of `range`.
uint64_t compacted_values_capacity(const BlockLayout& layout, BlockRange range);

// Elements that `n` packed blocks occupy when the last of them is block `last`.
uint64_t packed_elements(const BlockLayout& layout, uint64_t n, uint64_t last);

// Usage error unless block_size > 0 and begin <= end <= num_blocks().
Status check_block_range(const BlockLayout& layout, BlockRange range);

// Usage error unless elem_size is 2 or 4.
Status check_elem_size(size_t elem_size);

// Usage error unless the `n` indices are strictly increasing and inside `range`.
Status check_block_indices(const uint64_t* indices, uint64_t n, BlockRange range);

// CPU compaction. Writes the indices of the non-zero blocks of `range`, in
// increasing order, to `indices` (room for range.size() entries) and their
// values packed to `values` (room for compacted_values_capacity() elements);
// returns how many blocks it wrote. `tensor` points at element 0. Blocking,
// no allocation; any thread may call it on disjoint outputs.
Result<uint64_t> compact_blocks(const void* tensor, size_t elem_size, const BlockLayout& layout, BlockRange range,
                                uint64_t* indices, void* values);

// CPU scatter. Writes each of the `n` packed blocks (`indices`, `values`) to
// its place in `out`, which points at element 0 of a tensor of the layout's
// shape; `out` may be the tensor the blocks came from (in place) or a separate
// output. With kZeroUnlisted every other block of `range` is zeroed too, so the
// whole range of `out` is written. Indices are checked first (usage error).
Status scatter_blocks(const uint64_t* indices, uint64_t n, const void* values, size_t elem_size,
                      const BlockLayout& layout, BlockRange range, void* out, ScatterMode mode);

}  // namespace omnib
