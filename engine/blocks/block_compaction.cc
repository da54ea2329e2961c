#include "engine/blocks/block_compaction.h"

#include <string>

namespace omnib {

uint64_t compacted_values_capacity(const BlockLayout& layout, BlockRange range) {
  return layout.elements_in(range);
}

uint64_t packed_elements(const BlockLayout& layout, uint64_t n, uint64_t last) {
  if (n == 0) return 0;
  return (n - 1) * layout.block_size() + layout.block_length(last);
}

Status check_block_range(const BlockLayout& layout, BlockRange range) {
  if (layout.block_size() == 0) return usage_error("block compaction: block size must be at least 1");
  if (range.begin > range.end || range.end > layout.num_blocks()) {
    return usage_error("block compaction: block range [" + std::to_string(range.begin) + ", " +
                       std::to_string(range.end) + ") is not inside the tensor's " +
                       std::to_string(layout.num_blocks()) + " blocks");
  }
  return Status::ok();
}

Status check_elem_size(size_t elem_size) {
  if (elem_size == 2 || elem_size == 4) return Status::ok();
  return usage_error("block compaction: elements of " + std::to_string(elem_size) +
                     " bytes are not supported (2 or 4 are)");
}

Status check_block_indices(const uint64_t* indices, uint64_t n, BlockRange range) {
  if (n > range.size()) {
    return usage_error("block scatter: " + std::to_string(n) + " blocks listed for a range of " +
                       std::to_string(range.size()));
  }
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t b = indices[k];
    if (b < range.begin || b >= range.end || (k > 0 && b <= indices[k - 1])) {
      return usage_error("block scatter: index " + std::to_string(k) + " (block " + std::to_string(b) +
                         ") is out of order or outside [" + std::to_string(range.begin) + ", " +
                         std::to_string(range.end) + ")");
    }
  }
  return Status::ok();
}

}  // namespace omnib
