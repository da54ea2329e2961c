// Builds a configuration's inputs: this rank's tensor, the reference sum of all
// ranks' tensors (every rank computes it locally from the seeds), and the
// measured sparsity of the inputs.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/blocks/input_support.h"
#include "engine/base/tensor.h"
#include "tools/record/result_record.h"
#include "tools/workloads/workload.h"

namespace omnib {

struct PreparedInputs {
  InputStats stats;
  std::unique_ptr<InputSupport> support;  // when asked for: every rank's non-zeros and the sum's
};

// Fills `mine` with rank's input and `reference` with the sum over all
// `nodes` ranks (summed in rank order). `scratch` is a tensor-sized buffer.
PreparedInputs prepare_inputs(const Workload& workload, int rank, int nodes, size_t block_size,
                              const TensorView& mine, const TensorView& reference, const TensorView& scratch,
                              bool keep_support = false);

}  // namespace omnib
