#include "cuda/device_buffer.h"

#include <utility>

#include "cuda/cuda_status.h"

namespace omnib::gpu {

int cuda_device_count(std::string* reason) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // Clear the error so a later, unrelated check does not report it again.
    cudaGetLastError();
    if (reason) *reason = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    return 0;
  }
  if (count == 0 && reason) *reason = "the CUDA driver reports no device";
  return count;
}

Result<DeviceBuffer> DeviceBuffer::allocate(size_t bytes) {
  DeviceBuffer buffer;
  if (bytes == 0) return Result<DeviceBuffer>(std::move(buffer));
  OMNIB_CUDA_TRY(cudaMalloc(&buffer.data_, bytes));
  buffer.size_ = bytes;
  return Result<DeviceBuffer>(std::move(buffer));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  // A destructor cannot report; a failing cudaFree means the context is gone.
  if (data_) cudaFree(data_);
}

Result<PinnedBuffer> PinnedBuffer::allocate(size_t bytes) {
  PinnedBuffer buffer;
  if (bytes == 0) return Result<PinnedBuffer>(std::move(buffer));
  OMNIB_CUDA_TRY(cudaHostAlloc(&buffer.host_, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  buffer.size_ = bytes;  // set now so the destructor frees it if the next call fails
  OMNIB_CUDA_TRY(cudaHostGetDevicePointer(&buffer.device_, buffer.host_, 0));
  return Result<PinnedBuffer>(std::move(buffer));
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : host_(std::exchange(other.host_, nullptr)),
      device_(std::exchange(other.device_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    if (host_) cudaFreeHost(host_);
    host_ = std::exchange(other.host_, nullptr);
    device_ = std::exchange(other.device_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

PinnedBuffer::~PinnedBuffer() {
  if (host_) cudaFreeHost(host_);
}

Status copy_to_device(void* device_dst, const void* host_src, size_t bytes) {
  if (bytes == 0) return Status::ok();
  OMNIB_CUDA_TRY(cudaMemcpy(device_dst, host_src, bytes, cudaMemcpyHostToDevice));
  // From pageable memory cudaMemcpy may return while the last DMA is still
  // in flight on the legacy stream; the consumers run on non-blocking
  // streams that would not wait for it.
  OMNIB_CUDA_TRY(cudaStreamSynchronize(nullptr));
  return Status::ok();
}

Status copy_to_host(void* host_dst, const void* device_src, size_t bytes) {
  if (bytes == 0) return Status::ok();
  OMNIB_CUDA_TRY(cudaMemcpy(host_dst, device_src, bytes, cudaMemcpyDeviceToHost));
  return Status::ok();
}

Status copy_async(void* dst, const void* src, size_t bytes, Stream stream) {
  if (bytes == 0) return Status::ok();
  OMNIB_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
  return Status::ok();
}

Status fill_async(void* device_dst, uint8_t byte, size_t bytes, Stream stream) {
  if (bytes == 0) return Status::ok();
  OMNIB_CUDA_TRY(cudaMemsetAsync(device_dst, byte, bytes, stream));
  return Status::ok();
}

Status synchronize(Stream stream) {
  OMNIB_CUDA_TRY(cudaStreamSynchronize(stream));
  return Status::ok();
}

}  // namespace omnib::gpu
