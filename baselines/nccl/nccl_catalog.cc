#include "baselines/nccl/nccl_catalog.h"

#include "baselines/common/double_binary_tree.h"
#include "baselines/common/even_partition.h"

namespace omnib {

WireCost nccl_analytic_cost(const CostInputs& c) {
  if (c.nodes < 2) return {};
  const double bytes = static_cast<double>(c.count * c.elem_size);
  const double per_rank = 2.0 * (c.nodes - 1) / c.nodes * bytes;
  return {per_rank, per_rank * c.nodes};
}

WireCost nccl_tree_analytic_cost(const CostInputs& c) {
  if (c.nodes < 2) return {};
  std::array<double, 2> half_bytes{};
  for (int t = 0; t < 2; ++t)
    half_bytes[static_cast<size_t>(t)] = static_cast<double>(even_slice(c.count, 2, t).length * c.elem_size);
  return double_tree_cost(c.nodes, half_bytes);
}

}  // namespace omnib
