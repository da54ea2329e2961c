#include "cuda/gpu_timer.h"

#include <utility>

#include "cuda/cuda_status.h"

namespace omnib::gpu {

Result<GpuTimer> GpuTimer::create() {
  GpuTimer timer;
  OMNIB_CUDA_TRY(cudaEventCreate(&timer.start_));
  OMNIB_CUDA_TRY(cudaEventCreate(&timer.stop_));
  return Result<GpuTimer>(std::move(timer));
}

GpuTimer::GpuTimer(GpuTimer&& other) noexcept
    : start_(std::exchange(other.start_, nullptr)), stop_(std::exchange(other.stop_, nullptr)) {}

GpuTimer& GpuTimer::operator=(GpuTimer&& other) noexcept {
  if (this != &other) {
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
    start_ = std::exchange(other.start_, nullptr);
    stop_ = std::exchange(other.stop_, nullptr);
  }
  return *this;
}

GpuTimer::~GpuTimer() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
}

Status GpuTimer::start(Stream stream) {
  OMNIB_CUDA_TRY(cudaEventRecord(start_, stream));
  return Status::ok();
}

Status GpuTimer::stop(Stream stream) {
  OMNIB_CUDA_TRY(cudaEventRecord(stop_, stream));
  return Status::ok();
}

Result<double> GpuTimer::elapsed_seconds() {
  OMNIB_CUDA_TRY(cudaEventSynchronize(stop_));
  float ms = 0;
  OMNIB_CUDA_TRY(cudaEventElapsedTime(&ms, start_, stop_));
  return ms * 1e-3;
}

}  // namespace omnib::gpu
