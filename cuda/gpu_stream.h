// A CUDA stream owned by its holder, the per-thread current device, and how
// the host waits for it.
// Plain C++: no CUDA header needed to include it.
#pragma once

#include "cuda/device_buffer.h"
#include "engine/base/status.h"

namespace omnib::gpu {

// A non-blocking stream (does not synchronize with the legacy default
// stream), destroyed with its holder. Move-only.
class OwnedStream {
 public:
  static Result<OwnedStream> create();

  OwnedStream() = default;
  OwnedStream(OwnedStream&& other) noexcept;
  OwnedStream& operator=(OwnedStream&& other) noexcept;
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  ~OwnedStream();

  Stream get() const { return stream_; }

 private:
  Stream stream_ = nullptr;
};

// The CUDA current device is per thread: every thread that touches a
// device's memory or streams selects it first.
Status use_device(int ordinal);
Result<int> current_device();

// Makes the host's waits for the current device (stream and event
// synchronization) sleep instead of spin (cudaDeviceScheduleBlockingSync):
// for ranks that share CPU cores, at some latency per wait. The setting
// belongs to the device's primary context, so it holds for every thread of
// the process; call it after use_device and before the device does any work.
// Checks that CUDA kept it.
Status block_host_waits();

}  // namespace omnib::gpu
