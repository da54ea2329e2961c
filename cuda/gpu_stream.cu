#include "cuda/gpu_stream.h"

#include <string>
#include <utility>

#include "cuda/cuda_status.h"

namespace omnib::gpu {

Result<OwnedStream> OwnedStream::create() {
  OwnedStream s;
  cudaStream_t raw = nullptr;
  OMNIB_CUDA_TRY(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
  s.stream_ = raw;
  return Result<OwnedStream>(std::move(s));
}

OwnedStream::OwnedStream(OwnedStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

OwnedStream& OwnedStream::operator=(OwnedStream&& other) noexcept {
  if (this != &other) {
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

OwnedStream::~OwnedStream() {
  if (stream_) cudaStreamDestroy(stream_);
}

Status use_device(int ordinal) {
  OMNIB_CUDA_TRY(cudaSetDevice(ordinal));
  return Status::ok();
}

Status block_host_waits() {
  OMNIB_CUDA_TRY(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  unsigned int flags = 0;
  OMNIB_CUDA_TRY(cudaGetDeviceFlags(&flags));
  if ((flags & cudaDeviceScheduleMask) != cudaDeviceScheduleBlockingSync)
    return unavailable_error("CUDA: cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) did not hold (flags now " +
                             std::to_string(flags) + "): run with --gpu-sync spin");
  return Status::ok();
}

Result<int> current_device() {
  int ordinal = 0;
  OMNIB_CUDA_TRY(cudaGetDevice(&ordinal));
  return ordinal;
}

}  // namespace omnib::gpu
