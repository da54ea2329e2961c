// CUDA error codes as omnib::Status, and the one OMNIB_CUDA_TRY, for code that
// calls the CUDA runtime (the .cu files here, the NCCL baseline). It includes
// the CUDA runtime header, so no public header includes it.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "engine/base/status.h"

namespace omnib::gpu {

// "CUDA: cudaMalloc(&p, bytes) failed: cudaErrorMemoryAllocation (out of memory)".
// A failing CUDA call means the GPU backend is unusable: kUnavailable (exit 6).
inline Status cuda_status(const char* call, cudaError_t err) {
  return unavailable_error(std::string("CUDA: ") + call + " failed: " + cudaGetErrorName(err) + " (" +
                           cudaGetErrorString(err) + ")");
}

}  // namespace omnib::gpu

// Returns a Status naming the call when a CUDA runtime call fails.
#define OMNIB_CUDA_TRY(call)                                                      \
  do {                                                                            \
    cudaError_t omnib_cuda_err_ = (call);                                         \
    if (omnib_cuda_err_ != cudaSuccess) return ::omnib::gpu::cuda_status(#call, omnib_cuda_err_); \
  } while (0)

// After a <<<...>>> launch: a bad configuration is only reported by cudaGetLastError.
#define OMNIB_CUDA_CHECK_LAUNCH(kernel_name)                                      \
  do {                                                                            \
    cudaError_t omnib_cuda_err_ = cudaGetLastError();                             \
    if (omnib_cuda_err_ != cudaSuccess)                                           \
      return ::omnib::gpu::cuda_status("launch of " kernel_name, omnib_cuda_err_); \
  } while (0)
