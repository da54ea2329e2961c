#include "baselines/nccl/nccl_catalog.h"

namespace omnib {

WireCost nccl_analytic_cost(const CostInputs& c) {
  if (c.nodes < 2) return {};
  const double bytes = static_cast<double>(c.count * c.elem_size);
  const double per_rank = 2.0 * (c.nodes - 1) / c.nodes * bytes;
  return {per_rank, per_rank * c.nodes};
}

}  // namespace omnib
