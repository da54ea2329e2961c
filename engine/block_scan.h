// CPU reference of block compaction: which blocks of a tensor hold a non-zero
// element. The CUDA kernels in cuda/ implement the same contract and are tested
// against these functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/block_layout.h"
#include "engine/tensor.h"

namespace omnib {

// True if any of the `n` 32-bit elements at `data` has a bit set other than a
// float's sign bit (so -0.0f counts as zero). Vectorizes to wide ORs.
bool block_is_nonzero(const uint32_t* data, size_t n);

// Appends to `out` the indices, in increasing order, of the blocks in `range`
// that hold a non-zero element. `data` points at element 0 of the tensor.
void find_nonzero_blocks(const void* data, const BlockLayout& layout, BlockRange range,
                         std::vector<uint64_t>& out);

// Same as above but for a whole tensor, without reusing a buffer.
std::vector<uint64_t> nonzero_blocks(const void* data, const BlockLayout& layout);

}  // namespace omnib
