// A CUDA stream owned by its holder, and the per-thread current device.
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

}  // namespace omnib::gpu
