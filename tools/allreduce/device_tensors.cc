#include "tools/allreduce/device_tensors.h"

#ifdef OMNIB_HAVE_CUDA_KERNELS
#include "cuda/device_buffer.h"
#include "cuda/gpu_stream.h"
#endif

namespace omnib {

#ifdef OMNIB_HAVE_CUDA_KERNELS
namespace {

class CudaTensors final : public DeviceTensors {
 public:
  CudaTensors(int device, gpu::DeviceBuffer in, gpu::DeviceBuffer out)
      : device_(device), in_(std::move(in)), out_(std::move(out)) {}

  TensorView input(size_t count, DType dtype) const override {
    return TensorView{in_.data(), count, dtype, DeviceKind::kCuda};
  }
  TensorView output(size_t count, DType dtype) const override {
    return TensorView{out_.data(), count, dtype, DeviceKind::kCuda};
  }
  Status upload(const TensorView& host) override { return gpu::copy_to_device(in_.data(), host.data, host.bytes()); }
  Status download(const TensorView& device, const TensorView& host) override {
    return gpu::copy_to_host(host.data, device.data, host.bytes());
  }
  Status fill(const TensorView& device, uint8_t byte) override {
    OMNIB_RETURN_IF_ERROR(gpu::fill_async(device.data, byte, device.bytes(), nullptr));
    return gpu::synchronize(nullptr);
  }
  std::string describe() const override { return "cuda:" + std::to_string(device_); }

 private:
  int device_;
  gpu::DeviceBuffer in_;
  gpu::DeviceBuffer out_;
};

}  // namespace

std::string device_tensors_unavailable_reason() {
  std::string why;
  if (gpu::cuda_device_count(&why) == 0) return "no CUDA device visible (" + why + ")";
  return "";
}

Result<std::unique_ptr<DeviceTensors>> DeviceTensors::create(int local_index, size_t max_bytes, GpuSync sync) {
  std::string why;
  const int devices = gpu::cuda_device_count(&why);
  if (devices == 0) return unavailable_error("--device cuda: no CUDA device visible (" + why + "); run with --device cpu");
  const int device = local_index % devices;
  OMNIB_RETURN_IF_ERROR(gpu::use_device(device));
  if (sync == GpuSync::kBlocking) OMNIB_RETURN_IF_ERROR(gpu::block_host_waits());
  auto in = gpu::DeviceBuffer::allocate(max_bytes);
  if (!in.is_ok()) return in.status();
  auto out = gpu::DeviceBuffer::allocate(max_bytes);
  if (!out.is_ok()) return out.status();
  return std::unique_ptr<DeviceTensors>(new CudaTensors(device, in.take(), out.take()));
}

int visible_gpus() { return gpu::cuda_device_count(); }

bool build_has_cuda_kernels() { return true; }

#else

std::string device_tensors_unavailable_reason() {
  return "this build has no CUDA support (configure with -DOMNIB_USE_CUDA=ON where nvcc is installed)";
}

Result<std::unique_ptr<DeviceTensors>> DeviceTensors::create(int, size_t, GpuSync) {
  return unavailable_error("--device cuda: " + device_tensors_unavailable_reason() + "; run with --device cpu");
}

int visible_gpus() { return 0; }

bool build_has_cuda_kernels() { return false; }

#endif

}  // namespace omnib
