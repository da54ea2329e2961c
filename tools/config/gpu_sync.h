// --gpu-sync: how a worker's host thread waits for its GPU (docs/gpu.md).
// `spin` leaves CUDA's default, which busy-waits while the process has no
// more contexts than the machine has cores (one per rank here: always);
// `blocking` makes those waits sleep (cudaDeviceScheduleBlockingSync), for
// ranks that share CPU cores with others, at some latency per wait.
#pragma once

#include <string>

namespace omnib {

enum class GpuSync { kSpin, kBlocking };

// "spin", "blocking".
const char* gpu_sync_name(GpuSync s);
bool parse_gpu_sync(const std::string& text, GpuSync* out);

}  // namespace omnib
