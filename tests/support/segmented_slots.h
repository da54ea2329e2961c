// A compaction in segments built on the host, laid out as the GPU kernel
// leaves it (cuda/block_compaction.cuh): segment s owns slots
// [s*S, (s+1)*S) and fills its first ones with its non-zero blocks (or
// every block), each with its count of non-zero elements. Unused slots keep
// a poison, so that code reading one is caught.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/blocks/block_layout.h"
#include "engine/blocks/block_taking.h"
#include "engine/blocks/nonzero_mask.h"

namespace omnib::test_inputs {

struct SegmentedSlots {
  std::vector<uint64_t> indices;
  std::vector<uint32_t> nonzeros;
  std::vector<uint32_t> segment_counts;
  uint64_t segment_blocks = 1;

  CompactedSlots view() const { return {indices.data(), nonzeros.data(), segment_counts.data(), segment_blocks}; }
};

template <typename W>
SegmentedSlots segment_on_host(const std::vector<W>& t, const BlockLayout& layout, BlockRange range,
                               uint64_t segment_blocks, bool every_block = false) {
  SegmentedSlots s;
  s.segment_blocks = segment_blocks;
  s.indices.assign(range.size(), ~uint64_t{0});
  s.nonzeros.assign(range.size(), 0xbadbadu);
  for (uint64_t first = 0; first < range.size(); first += segment_blocks) {
    uint32_t used = 0;
    for (uint64_t j = first; j < std::min(range.size(), first + segment_blocks); ++j) {
      const uint64_t b = range.begin + j;
      uint32_t count = 0;
      for_each_nonzero<W>(reinterpret_cast<const uint8_t*>(t.data() + layout.block_begin(b)), layout.block_length(b),
                          [&](size_t) { ++count; });
      if (count == 0 && !every_block) continue;
      s.indices[first + used] = b;
      s.nonzeros[first + used] = count;
      ++used;
    }
    s.segment_counts.push_back(used);
  }
  return s;
}

}  // namespace omnib::test_inputs
