#include "engine/blocks/block_taking.h"

#include <cstring>
#include <string>

#include "engine/blocks/block_compaction.h"
#include "engine/blocks/nonzero_mask.h"

namespace omnib {

Status take_compacted_elements(const void* tensor, size_t elem_size, const BlockLayout& layout, BlockRange range,
                               const CompactedSlots& slots, uint32_t* positions, void* values) {
  OMNIB_RETURN_IF_ERROR(check_elem_size(elem_size));
  OMNIB_RETURN_IF_ERROR(check_block_range(layout, range));
  const uint64_t capacity = taken_slot_capacity(layout.block_size());
  const uint64_t per_segment = slots.segment_blocks == 0 ? 1 : slots.segment_blocks;
  const uint64_t segments = (range.size() + per_segment - 1) / per_segment;
  const auto* base = static_cast<const uint8_t*>(tensor);
  auto* out_values = static_cast<uint8_t*>(values);
  for (uint64_t s = 0; s < segments; ++s) {
    for (uint64_t slot = s * per_segment; slot < s * per_segment + slots.segment_counts[s]; ++slot) {
      const uint64_t block = slots.indices[slot];
      const uint64_t len = layout.block_length(block);
      const uint32_t count = slots.nonzeros[slot];
      if (!takes_block(count, len)) continue;
      const uint8_t* src = base + layout.block_begin(block) * elem_size;
      uint32_t* pos = positions + slot * capacity;
      uint8_t* val = out_values + slot * capacity * elem_size;
      uint64_t taken = 0;
      auto take = [&](size_t i) {
        if (taken < count) {
          pos[taken] = static_cast<uint32_t>(i);
          std::memcpy(val + taken * elem_size, src + i * elem_size, elem_size);
        }
        ++taken;
      };
      if (elem_size == 2)
        for_each_nonzero<uint16_t>(src, len, take);
      else
        for_each_nonzero<uint32_t>(src, len, take);
      if (taken != count)
        return internal_error("taking: block " + std::to_string(block) + " was counted with " +
                              std::to_string(count) + " non-zeros but holds " + std::to_string(taken));
    }
  }
  return Status::ok();
}

}  // namespace omnib
