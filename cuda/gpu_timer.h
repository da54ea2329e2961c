// Times work queued on a stream with a pair of CUDA events, for the
// microbenchmarks. Plain C++: no CUDA header needed to include it.
#pragma once

#include "cuda/device_buffer.h"
#include "engine/base/status.h"

struct CUevent_st;  // what cudaEvent_t points to

namespace omnib::gpu {

class GpuTimer {
 public:
  static Result<GpuTimer> create();

  GpuTimer() = default;
  GpuTimer(GpuTimer&& other) noexcept;
  GpuTimer& operator=(GpuTimer&& other) noexcept;
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  ~GpuTimer();

  // Marks the start and the end of the timed work on `stream`.
  Status start(Stream stream = nullptr);
  Status stop(Stream stream = nullptr);
  // Waits for the stop mark; seconds between the two marks.
  Result<double> elapsed_seconds();

 private:
  CUevent_st* start_ = nullptr;
  CUevent_st* stop_ = nullptr;
};

}  // namespace omnib::gpu
