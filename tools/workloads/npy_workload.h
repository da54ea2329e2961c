// Replays the sparsity of recorded gradients: rank r's tensor has its
// non-zeros where DIR/rank<r>.npy has them. The values written are the
// harness's small integers (write_nonzero_values), not the file's values, so
// that every algorithm's sum can be checked bit for bit.
//
// The files are read once, when the workload is made; only a bitmap of their
// non-zero positions is kept (count/8 bytes per rank).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tools/workloads/workload.h"

namespace omnib {

// DIR/rank<r>.npy: the file that holds rank r's tensor.
std::string npy_rank_path(const std::string& dir, int rank);

class NpyWorkload final : public Workload {
 public:
  // Reads DIR/rank0.npy .. rank<nodes-1>.npy; they must agree in element
  // count and match the dtype. Errors are usage errors naming the file.
  // nodes <= 0 (world size not known yet) reads rank0.npy and the files that
  // follow it up to the first missing one.
  static Result<std::unique_ptr<NpyWorkload>> load(const WorkloadSpec& spec);
  static Result<std::unique_ptr<Workload>> create(const WorkloadSpec& spec);

  void fill(int rank, const TensorView& out) const override;
  uint64_t count() const { return count_; }
  // Fraction of non-zero elements, averaged over ranks.
  double mean_density() const;

 private:
  explicit NpyWorkload(const WorkloadSpec& spec) : spec_(spec) {}
  WorkloadSpec spec_;
  uint64_t count_ = 0;
  std::vector<std::vector<uint64_t>> nonzero_bits_;  // per rank
  std::vector<uint64_t> nonzeros_;                   // per rank
};

}  // namespace omnib
