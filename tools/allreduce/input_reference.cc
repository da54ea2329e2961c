#include "tools/allreduce/input_reference.h"

#include <algorithm>
#include <cstring>

#include "engine/blocks/block_layout.h"
#include "engine/blocks/block_scan.h"
#include "engine/blocks/reduce_ops.h"

namespace omnib {

PreparedInputs prepare_inputs(const Workload& workload, int rank, int nodes, size_t block_size,
                              const TensorView& mine, const TensorView& reference, const TensorView& scratch, bool keep_support) {
  PreparedInputs p;
  if (keep_support) p.support = std::make_unique<InputSupport>(nodes, mine.count);
  const BlockLayout layout(mine.count, block_size);
  const uint64_t nb = layout.num_blocks();
  std::vector<uint8_t> in_union(nb, 0);
  uint64_t union_elements = 0;
  std::memset(reference.data, 0, reference.bytes());
  // 16-bit floats are summed in fp32 and rounded once, like the engine's
  // aggregator; within the rank limit (docs/workloads.md) every partial sum
  // is exact, so algorithms that round every step agree bit for bit.
  const bool wide = is_16bit_float(reference.dtype);
  std::vector<float> wide_sum(wide ? reference.count : 0, 0.0f);
  double mean_block = 0;
  const size_t esize = dtype_size(scratch.dtype);
  const auto* elements = static_cast<const uint8_t*>(scratch.data);
  std::vector<uint8_t> union_mask(mine.count, 0);
  for (int r = 0; r < nodes; ++r) {
    workload.fill(r, scratch);
    if (r == rank) std::memcpy(mine.data, scratch.data, mine.bytes());
    if (p.support) p.support->set_rank(r, scratch.data, esize);
    if (wide)
      add_widened(reference.dtype, wide_sum.data(), scratch.data, reference.count);
    else
      add_into(reference.dtype, reference.data, scratch.data, reference.count);
    uint64_t nonzero_elements = 0;
    uint64_t nonzero_blocks = 0;
    for (uint64_t b = 0; b < nb; ++b) {
      const size_t begin = layout.block_begin(b);
      const size_t len = layout.block_length(b);
      if (!block_is_nonzero(elements + begin * esize, len, esize)) continue;
      ++nonzero_blocks;
      in_union[b] = 1;
      for (size_t i = begin; i < begin + len; ++i) {
        if (block_is_nonzero(elements + i * esize, 1, esize)) {
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
  if (wide) narrow_from(reference.dtype, reference.data, wide_sum.data(), reference.count);
  if (p.support) p.support->set_sum(reference.data, esize);
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
