// A CUDA event owned by its holder: marks a point in a stream's work that
// the host can wait for, and, created with timing, a time on the GPU.
// Plain C++: no CUDA header needed to include it.
#pragma once

#include "cuda/device_buffer.h"
#include "engine/base/status.h"

struct CUevent_st;  // what cudaEvent_t points to

namespace omnib::gpu {

class OwnedEvent {
 public:
  // Without timing an event is cheaper to record and to wait for.
  static Result<OwnedEvent> create(bool timing);

  OwnedEvent() = default;
  OwnedEvent(OwnedEvent&& other) noexcept;
  OwnedEvent& operator=(OwnedEvent&& other) noexcept;
  OwnedEvent(const OwnedEvent&) = delete;
  OwnedEvent& operator=(const OwnedEvent&) = delete;
  ~OwnedEvent();

  // Marks the point after everything queued on `stream` so far.
  Status record(Stream stream);
  // Blocks the calling thread until the stream has passed the mark (spinning
  // or sleeping as the device's schedule flags say).
  Status wait() const;
  // Milliseconds from `earlier`'s mark to this one; both must have passed
  // and have been created with timing.
  Result<double> ms_since(const OwnedEvent& earlier) const;

 private:
  CUevent_st* event_ = nullptr;
};

}  // namespace omnib::gpu
