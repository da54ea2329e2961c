#include "tools/allreduce/device_tensors.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

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

int visible_gpus() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return 0;
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return 0;
  }
  if (child == 0) {
    close(fds[0]);
    const int n = gpu::cuda_device_count();
    const ssize_t wrote = write(fds[1], &n, sizeof n);
    _exit(wrote == static_cast<ssize_t>(sizeof n) ? 0 : 1);
  }
  close(fds[1]);
  // The driver answers in well under a second; a minute covers a loaded host.
  int n = 0;
  pollfd ready{fds[0], POLLIN, 0};
  int polled = 0;
  do polled = poll(&ready, 1, 60'000);
  while (polled < 0 && errno == EINTR);
  ssize_t got = 0;
  if (polled > 0) {
    do got = read(fds[0], &n, sizeof n);
    while (got < 0 && errno == EINTR);
  } else {
    kill(child, SIGKILL);
  }
  close(fds[0]);
  while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
  return got == static_cast<ssize_t>(sizeof n) ? n : 0;
}

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
