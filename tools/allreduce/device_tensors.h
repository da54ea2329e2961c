// A worker's tensors on the GPU for `--device cuda`: the harness prepares
// inputs and checks results on the host, and copies them to and from these
// device buffers outside the timed region. Collectives get device views.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/base/status.h"
#include "engine/base/tensor.h"
#include "tools/config/gpu_sync.h"

namespace omnib {

class DeviceTensors {
 public:
  // Selects GPU `local_index` modulo the visible devices for this thread (the
  // rank's main thread), sets how the host waits for it (`sync`: before the
  // device's first work) and allocates input and output of `max_bytes` each.
  // Unavailable (exit 6) in a build without CUDA or on a machine without a GPU.
  static Result<std::unique_ptr<DeviceTensors>> create(int local_index, size_t max_bytes, GpuSync sync);
  virtual ~DeviceTensors() = default;

  virtual TensorView input(size_t count, DType dtype) const = 0;
  virtual TensorView output(size_t count, DType dtype) const = 0;
  // Host tensor -> device input.
  virtual Status upload(const TensorView& host) = 0;
  // Device view (input or output) -> host tensor of the same count.
  virtual Status download(const TensorView& device, const TensorView& host) = 0;
  // Sets every byte of a device view to `byte` (the harness's poison) and
  // waits until it is done.
  virtual Status fill(const TensorView& device, uint8_t byte) = 0;
  // Which GPU, for the report.
  virtual std::string describe() const = 0;
};

// Why this build or machine cannot place tensors on a GPU, or "" when it can.
std::string device_tensors_unavailable_reason();

// CUDA devices this process sees: 0 without one, or in a build without CUDA.
// Counted in a short-lived child process, so that this process's CUDA driver
// (which starts threads of its own) is not started: the rank counts them
// before it writes its environment (tools/allreduce/start_up_env.h).
int visible_gpus();

// Whether this build has the CUDA kernels at all (a static check: it touches
// no GPU, so a launcher may call it before forking ranks).
bool build_has_cuda_kernels();

}  // namespace omnib
