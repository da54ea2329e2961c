// Embedding-table gradients. The tensor is a table of rows of --block-size
// elements (one row = one block). Each rank touches row r independently with
// probability p(r) = min(1, c / k(r)^alpha), where k(r) is the row's
// popularity rank (1 = hottest; the same on every rank, so hot rows overlap
// across ranks) and c is chosen so that the expected number of touched rows
// is density * rows. Popularity ranks are scattered over the table by a fixed
// permutation, as hashed ids are in a real table, or follow row order
// (zipf_sorted: a frequency-sorted vocabulary, hot rows at the front). An
// optional dense prefix (a model's dense layers) is non-zero on every rank.
#pragma once

#include <memory>
#include <vector>

#include "tools/workloads/workload.h"

namespace omnib {

class ZipfWorkload final : public Workload {
 public:
  static Result<std::unique_ptr<Workload>> create(const WorkloadSpec& spec);
  void fill(int rank, const TensorView& out) const override;
  // The probability that a rank touches each row of a `count`-element tensor,
  // in row order (dense-prefix rows are 1).
  std::vector<double> row_probabilities(size_t count) const;

 private:
  explicit ZipfWorkload(const WorkloadSpec& spec) : spec_(spec) {}
  WorkloadSpec spec_;
};

}  // namespace omnib
