// CPU reference of block compaction: which blocks of a tensor hold a non-zero
// element. The CUDA kernels in cuda/ implement the same contract and are tested
// against these functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/blocks/block_layout.h"
#include "engine/blocks/found_elements.h"
#include "engine/base/tensor.h"

namespace omnib {

// True if any of the `n` elements at `data` has a bit set other than its
// sign bit (bit 31 of a 4-byte element, bit 15 of a 2-byte one), so a float
// -0.0 counts as zero. Vectorizes to wide ORs.
bool block_is_nonzero(const uint32_t* data, size_t n);
bool block_is_nonzero(const uint16_t* data, size_t n);
// The same for `n` elements of `elem_size` bytes (2 or 4).
bool block_is_nonzero(const void* data, size_t n, size_t elem_size);

// The elements among `n` at `data` that block_is_nonzero counts as non-zero.
uint64_t count_nonzero(const void* data, size_t n, size_t elem_size);

// Appends to `out` the indices, in increasing order, of the blocks in `range`
// that hold a non-zero element. `data` points at element 0 of the tensor,
// whose elements are `elem_size` bytes (2 or 4).
void find_nonzero_blocks(const void* data, size_t elem_size, const BlockLayout& layout, BlockRange range,
                         std::vector<uint64_t>& out);

// The same blocks, each with its count_nonzero appended to `counts`: a
// block found non-zero is counted at once, while it is in cache, rather
// than after the whole range was searched.
void find_and_count_nonzero_blocks(const void* data, size_t elem_size, const BlockLayout& layout, BlockRange range,
                                   std::vector<uint64_t>& out, std::vector<uint32_t>& counts);

// find_and_count_nonzero_blocks, and for every found block sparse enough
// (takes_block) its non-zero elements too, taken from
// cache (engine/blocks/found_elements.h): `taken.first` gets one entry per found
// block.
void find_count_and_take_nonzero_blocks(const void* data, size_t elem_size, const BlockLayout& layout,
                                        BlockRange range, std::vector<uint64_t>& out, std::vector<uint32_t>& counts,
                                        FoundElements& taken);

// Same as above but for a whole tensor, without reusing a buffer.
std::vector<uint64_t> nonzero_blocks(const void* data, size_t elem_size, const BlockLayout& layout);

}  // namespace omnib
