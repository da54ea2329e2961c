// Top-k sparsified gradients (as in Ok-Topk, gTop-k, DGC). Each rank holds a
// deterministic dense Gaussian-like gradient and keeps exactly
// k = round(density * count) of its largest magnitudes, zeroing the rest.
//
// The gradient has the structure that makes real top-k sets cluster and
// overlap: the tensor is cut into "layers" whose scales differ (log-normal,
// the same on every rank: one model), and each element is a mix of a part
// shared by all ranks (the full-batch gradient) and a per-rank part (the
// mini-batch noise). Magnitudes only rank the elements; the values written
// are small integers (write_nonzero_values), so sums stay exact.
#pragma once

#include <memory>

#include "tools/workloads/workload.h"

namespace omnib {

class TopkWorkload final : public Workload {
 public:
  static Result<std::unique_ptr<Workload>> create(const WorkloadSpec& spec);
  void fill(int rank, const TensorView& out) const override;
  // Elements kept out of `count`.
  static size_t kept(double density, size_t count);

 private:
  explicit TopkWorkload(const WorkloadSpec& spec) : spec_(spec) {}
  WorkloadSpec spec_;
};

}  // namespace omnib
