// One rank's tensors in `omni-bench allreduce`: host buffers of the largest
// size, reused for every size, its inputs made (and the reference sum
// computed) per size, each call's output poisoned before and checked after,
// bit for bit. With --device cuda the collectives see GPU copies; inputs are
// made and checked on the host. Dedicated aggregator ranks hold no tensor,
// only its shape.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/base/status.h"
#include "engine/base/tensor.h"
#include "engine/blocks/input_stats.h"
#include "engine/blocks/input_support.h"
#include "tools/allreduce/device_tensors.h"
#include "tools/measure/rank_samples.h"
#include "tools/workloads/workload.h"

namespace omnib {

// A worker's tensors for one configuration.
struct Tensors {
  TensorView in, out;            // what the collectives see
  TensorView host_in, host_out;  // host copies (the same as in/out on the host path)
  TensorView reference;
};

class RankTensors {
 public:
  // `largest`: bytes of the largest size; `device`: GPU copies (--device
  // cuda), else null.
  RankTensors(int rank, int nodes, bool worker, bool inplace, size_t largest, DeviceTensors* device);

  // This rank's tensors of `count` elements, inputs made and the reference
  // summed; `stats` gets the inputs' densities. With `keep_support`, every
  // rank's non-zeros are kept (support()) for the exact wire models.
  Result<Tensors> prepare(size_t count, DType dtype, size_t block_size, const Workload& workload, bool keep_support,
                          InputStats& stats);
  // A worker's host input and output buffers (the largest size), for what a
  // rank measures before prepare() remakes them: the memory floor
  // (tools/allreduce/rank_floor.h) is timed on the memory the calls use.
  // Both null on a rank without tensors.
  struct HostBuffers {
    void* input = nullptr;
    void* output = nullptr;
  };
  HostBuffers host_buffers() const;

  // What prepare() kept of every rank's non-zeros; null unless asked.
  const InputSupport* support() const { return support_.get(); }

  // Outside the timed region, before every call: in place, the input is made
  // again (the last call left a sum in it); out of place, the output is
  // poisoned, so that a call which writes nothing cannot inherit a correct
  // answer from an earlier call or another algorithm.
  Status before_call(const Tensors& t, const Workload& workload) const;
  // After every call: the output against the reference, bit for bit; wrong
  // elements go to samples.wrong under `call`.
  Status check_call(const Tensors& t, uint64_t call, RankSamples& samples) const;

 private:
  // Host buffers of the largest size, reused for every size.
  struct Buffers {
    std::vector<uint8_t> input, output, reference, scratch;
    explicit Buffers(size_t bytes) : input(bytes), output(bytes), reference(bytes), scratch(bytes) {}
  };

  const int rank_;
  const int nodes_;
  const bool worker_;
  const bool inplace_;
  std::unique_ptr<Buffers> buffers_;  // workers only
  DeviceTensors* device_;
  std::unique_ptr<InputSupport> support_;
};

}  // namespace omnib
