// Non-zero elements spread uniformly at random: each element of each rank is
// non-zero with probability --density, independently. Block density is then
// about 1-(1-d)^B, far above the element density: the case where block
// sparsity helps least.
#pragma once

#include <memory>

#include "tools/workloads/workload.h"

namespace omnib {

class ScatteredWorkload final : public Workload {
 public:
  static Result<std::unique_ptr<Workload>> create(const WorkloadSpec& spec);
  void fill(int rank, const TensorView& out) const override;

 private:
  explicit ScatteredWorkload(const WorkloadSpec& spec) : spec_(spec) {}
  WorkloadSpec spec_;
};

}  // namespace omnib
