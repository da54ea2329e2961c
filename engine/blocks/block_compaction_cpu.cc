// CPU reference of the block compaction contract (engine/blocks/block_compaction.h).
// The non-zero test is block_scan's vectorized block_is_nonzero; copies and
// fills are memcpy/memset over runs of adjacent blocks, so both directions
// stream at memory speed.
#include <cstring>

#include "engine/blocks/block_compaction.h"
#include "engine/blocks/block_scan.h"

namespace omnib {

Result<uint64_t> compact_blocks(const void* tensor, size_t elem_size, const BlockLayout& layout, BlockRange range,
                                uint64_t* indices, void* values) {
  OMNIB_RETURN_IF_ERROR(check_block_range(layout, range));
  OMNIB_RETURN_IF_ERROR(check_elem_size(elem_size));
  const auto* elements = static_cast<const uint8_t*>(tensor);
  auto* out = static_cast<uint8_t*>(values);
  const size_t block_bytes = layout.block_size() * elem_size;
  uint64_t n = 0;
  for (uint64_t b = range.begin; b < range.end; ++b) {
    const uint8_t* block = elements + layout.block_begin(b) * elem_size;
    size_t len = layout.block_length(b);
    if (!block_is_nonzero(block, len, elem_size)) continue;
    // The block was just read by the test, so this copy comes from cache.
    std::memcpy(out + n * block_bytes, block, len * elem_size);
    indices[n++] = b;
  }
  return n;
}

Status scatter_blocks(const uint64_t* indices, uint64_t n, const void* values, size_t elem_size,
                      const BlockLayout& layout, BlockRange range, void* out, ScatterMode mode) {
  OMNIB_RETURN_IF_ERROR(check_block_range(layout, range));
  OMNIB_RETURN_IF_ERROR(check_elem_size(elem_size));
  OMNIB_RETURN_IF_ERROR(check_block_indices(indices, n, range));
  const auto* in = static_cast<const uint8_t*>(values);
  auto* dst = static_cast<uint8_t*>(out);
  const bool zero = mode == ScatterMode::kZeroUnlisted;
  uint64_t next_unwritten = range.begin;  // first block of the range not yet written
  uint64_t k = 0;
  while (k < n) {
    // A run of adjacent listed blocks is contiguous on both sides: one copy.
    uint64_t first = indices[k];
    uint64_t run = 1;
    while (k + run < n && indices[k + run] == first + run) ++run;
    if (zero && first > next_unwritten) {
      std::memset(dst + layout.block_begin(next_unwritten) * elem_size, 0,
                  layout.elements_in({next_unwritten, first}) * elem_size);
    }
    std::memcpy(dst + layout.block_begin(first) * elem_size, in + k * layout.block_size() * elem_size,
                layout.elements_in({first, first + run}) * elem_size);
    next_unwritten = first + run;
    k += run;
  }
  if (zero && range.end > next_unwritten) {
    std::memset(dst + layout.block_begin(next_unwritten) * elem_size, 0,
                layout.elements_in({next_unwritten, range.end}) * elem_size);
  }
  return Status::ok();
}

}  // namespace omnib
