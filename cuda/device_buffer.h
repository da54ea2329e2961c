// Device memory, pinned host memory and copies for the harness, tests and
// benchmarks. Plain C++: no CUDA header needed to include it.
//
// Every call is checked and returns a Status naming the CUDA call that failed
// (kUnavailable). Buffers are RAII and move-only; they free on destruction and
// must not outlive the process's CUDA context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/base/status.h"

struct CUstream_st;  // what cudaStream_t points to

namespace omnib::gpu {

// A cudaStream_t; nullptr is the legacy default stream.
using Stream = CUstream_st*;

// Number of usable CUDA devices. 0 when there is none, with `reason` (if given)
// saying why: no driver, driver older than the runtime, no device, ...
int cuda_device_count(std::string* reason = nullptr);

// Memory on the current device (cudaMalloc).
class DeviceBuffer {
 public:
  static Result<DeviceBuffer> allocate(size_t bytes);

  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* data() const { return data_; }
  size_t size() const { return size_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Page-locked host memory, mapped into the device address space: kernels can
// write it directly (the transport then sends it without a staging copy) and
// copies to and from it run at full PCIe speed.
class PinnedBuffer {
 public:
  static Result<PinnedBuffer> allocate(size_t bytes);

  PinnedBuffer() = default;
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer();

  void* host() const { return host_; }      // for the CPU
  void* device() const { return device_; }  // the same bytes, for kernels
  size_t size() const { return size_; }
  template <typename T>
  T* as() const { return static_cast<T*>(host_); }

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
  size_t size_ = 0;
};

// Blocking copies (pageable or pinned host memory).
Status copy_to_device(void* device_dst, const void* host_src, size_t bytes);
Status copy_to_host(void* host_dst, const void* device_src, size_t bytes);

// Asynchronous copy in any direction (unified addressing finds out which).
Status copy_async(void* dst, const void* src, size_t bytes, Stream stream);

// Asynchronous memset of device memory to `byte`.
Status fill_async(void* device_dst, uint8_t byte, size_t bytes, Stream stream);

// Waits for everything queued on `stream`; reports errors of earlier kernels.
Status synchronize(Stream stream = nullptr);

}  // namespace omnib::gpu
