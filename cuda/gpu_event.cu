#include "cuda/gpu_event.h"

#include <utility>

#include "cuda/cuda_status.h"

namespace omnib::gpu {

Result<OwnedEvent> OwnedEvent::create(bool timing) {
  OwnedEvent e;
  cudaEvent_t raw = nullptr;
  OMNIB_CUDA_TRY(cudaEventCreateWithFlags(&raw, timing ? cudaEventDefault : cudaEventDisableTiming));
  e.event_ = raw;
  return Result<OwnedEvent>(std::move(e));
}

OwnedEvent::OwnedEvent(OwnedEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

OwnedEvent& OwnedEvent::operator=(OwnedEvent&& other) noexcept {
  if (this != &other) {
    if (event_) cudaEventDestroy(event_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

OwnedEvent::~OwnedEvent() {
  if (event_) cudaEventDestroy(event_);
}

Status OwnedEvent::record(Stream stream) {
  if (event_ == nullptr) return internal_error("recording an event that was never created");
  OMNIB_CUDA_TRY(cudaEventRecord(event_, stream));
  return Status::ok();
}

Status OwnedEvent::wait() const {
  if (event_ == nullptr) return internal_error("waiting for an event that was never created");
  OMNIB_CUDA_TRY(cudaEventSynchronize(event_));
  return Status::ok();
}

Result<double> OwnedEvent::ms_since(const OwnedEvent& earlier) const {
  if (event_ == nullptr || earlier.event_ == nullptr) return internal_error("timing an event never created");
  float ms = 0;
  OMNIB_CUDA_TRY(cudaEventElapsedTime(&ms, earlier.event_, event_));
  return static_cast<double>(ms);
}

}  // namespace omnib::gpu
