// Times work queued on a stream with a pair of CUDA events, for the
// microbenchmarks. Plain C++: no CUDA header needed to include it.
#pragma once

#include "cuda/device_buffer.h"
#include "cuda/gpu_event.h"
#include "engine/base/status.h"

namespace omnib::gpu {

class GpuTimer {
 public:
  static Result<GpuTimer> create();

  // Marks the start and the end of the timed work on `stream`.
  Status start(Stream stream = nullptr);
  Status stop(Stream stream = nullptr);
  // Waits for the stop mark; seconds between the two marks.
  Result<double> elapsed_seconds();

 private:
  OwnedEvent start_;
  OwnedEvent stop_;
};

}  // namespace omnib::gpu
