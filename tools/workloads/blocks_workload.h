// The default workload: non-zeros come in whole blocks, so block density equals
// element density. Which blocks are non-zero follows --overlap.
#pragma once

#include <memory>

#include "tools/workloads/workload.h"

namespace omnib {

class BlocksWorkload final : public Workload {
 public:
  static Result<std::unique_ptr<Workload>> create(const WorkloadSpec& spec);
  void fill(int rank, const TensorView& out) const override;
  // Whether block `b` is non-zero on `rank`.
  bool block_nonzero(int rank, uint64_t b) const;

 private:
  explicit BlocksWorkload(const WorkloadSpec& spec) : spec_(spec) {}
  WorkloadSpec spec_;
};

}  // namespace omnib
