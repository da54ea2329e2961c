#include "tools/input_reference.h"

#include <algorithm>
#include <cstring>

#include "engine/block_layout.h"
#include "engine/block_scan.h"
#include "engine/reduce_ops.h"

namespace omnib {

PreparedInputs prepare_inputs(const Workload& workload, int rank, int nodes, size_t block_size,
                              const TensorView& mine, const TensorView& reference, const TensorView& scratch) {
  PreparedInputs p;
  const BlockLayout layout(mine.count, block_size);
  const uint64_t nb = layout.num_blocks();
  std::vector<uint8_t> in_union(nb, 0);
  uint64_t union_elements = 0;
  std::memset(reference.data, 0, reference.bytes());
  double mean_block = 0;
  const auto* bits = static_cast<const uint32_t*>(scratch.data);
  std::vector<uint8_t> union_mask(mine.count, 0);
  for (int r = 0; r < nodes; ++r) {
    workload.fill(r, scratch);
    if (r == rank) std::memcpy(mine.data, scratch.data, mine.bytes());
    add_into(reference.dtype, reference.data, scratch.data, reference.count);
    uint64_t nonzero_elements = 0;
    uint64_t nonzero_blocks = 0;
    for (uint64_t b = 0; b < nb; ++b) {
      const size_t begin = layout.block_begin(b);
      const size_t len = layout.block_length(b);
      if (!block_is_nonzero(bits + begin, len)) continue;
      ++nonzero_blocks;
      in_union[b] = 1;
      for (size_t i = begin; i < begin + len; ++i) {
        if (bits[i] & 0x7fffffffu) {
          ++nonzero_elements;
          union_mask[i] = 1;
        }
      }
    }
    const double count = static_cast<double>(std::max<size_t>(mine.count, 1));
    p.stats.element_density = std::max(p.stats.element_density, static_cast<double>(nonzero_elements) / count);
    const double bd = static_cast<double>(nonzero_blocks) / static_cast<double>(std::max<uint64_t>(nb, 1));
    p.stats.block_density = std::max(p.stats.block_density, bd);
    mean_block += bd / nodes;
  }
  for (uint8_t m : union_mask) union_elements += m;
  uint64_t union_blocks = 0;
  for (uint8_t u : in_union) union_blocks += u;
  p.stats.mean_block_density = mean_block;
  p.stats.union_block_density = static_cast<double>(union_blocks) / static_cast<double>(std::max<uint64_t>(nb, 1));
  p.stats.union_element_density =
      static_cast<double>(union_elements) / static_cast<double>(std::max<size_t>(mine.count, 1));
  return p;
}

}  // namespace omnib
