// Device buffers for the GPU tests: results unwrapped with a test failure,
// host vectors copied to and from the device. Only for builds with the kernels.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "cuda/device_buffer.h"

namespace omnib::gpu_test {

template <typename T>
T take_or_fail(Result<T> r) {
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.take();
}

// A device copy of `host` (room for one element when it is empty).
template <typename T>
gpu::DeviceBuffer device_copy(const std::vector<T>& host) {
  gpu::DeviceBuffer d = take_or_fail(gpu::DeviceBuffer::allocate(std::max<size_t>(1, host.size()) * sizeof(T)));
  EXPECT_TRUE(gpu::copy_to_device(d.data(), host.data(), host.size() * sizeof(T)).is_ok());
  return d;
}

// `n` elements at `device`, on the host.
template <typename T>
std::vector<T> download(const void* device, size_t n) {
  std::vector<T> host(n);
  EXPECT_TRUE(gpu::copy_to_host(host.data(), device, n * sizeof(T)).is_ok());
  return host;
}

}  // namespace omnib::gpu_test
