#include "cuda/gpu_timer.h"

#include <utility>

namespace omnib::gpu {

Result<GpuTimer> GpuTimer::create() {
  GpuTimer timer;
  auto start = OwnedEvent::create(true);
  if (!start.is_ok()) return start.status();
  auto stop = OwnedEvent::create(true);
  if (!stop.is_ok()) return stop.status();
  timer.start_ = start.take();
  timer.stop_ = stop.take();
  return Result<GpuTimer>(std::move(timer));
}

Status GpuTimer::start(Stream stream) { return start_.record(stream); }

Status GpuTimer::stop(Stream stream) { return stop_.record(stream); }

Result<double> GpuTimer::elapsed_seconds() {
  OMNIB_RETURN_IF_ERROR(stop_.wait());
  auto ms = stop_.ms_since(start_);
  if (!ms.is_ok()) return ms.status();
  return ms.value() * 1e-3;
}

}  // namespace omnib::gpu
