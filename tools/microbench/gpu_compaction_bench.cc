// GPU compaction and scatter kernels on a 256 MiB fp32 tensor, next to a
// device-to-device cudaMemcpy of the same size. A one-pass kernel cannot move
// its bytes faster than the copy does, so each kernel also reports
// copy_fraction: its bytes per second over the copy's. Times are CUDA event
// pairs around each launch (manual time). Without a device every benchmark
// here is skipped with the reason.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda/block_compaction.cuh"
#include "cuda/device_buffer.h"
#include "cuda/gpu_timer.h"
#include "tools/microbench/bench_inputs.h"

namespace omnib::bench {
namespace {

constexpr size_t kGpuElements = size_t{64} << 20;  // 256 MiB of fp32
constexpr size_t kGpuBytes = kGpuElements * 4;

bool skip_without_device(benchmark::State& state) {
  std::string reason;
  if (gpu::cuda_device_count(&reason) > 0) return false;
  state.SkipWithError(("no CUDA device: " + reason).c_str());
  return true;
}

bool skip_on_error(benchmark::State& state, const Status& s) {
  if (s.is_ok()) return false;
  state.SkipWithError(s.message().c_str());
  return true;
}

template <typename T>
bool take(benchmark::State& state, Result<T> r, T& out) {
  if (skip_on_error(state, r.status())) return false;
  out = r.take();
  return true;
}

// Times `launch` (returns Status) once per iteration, after one untimed warm-up.
template <typename Launch>
void run_timed(benchmark::State& state, Launch&& launch) {
  gpu::GpuTimer timer;
  if (!take(state, gpu::GpuTimer::create(), timer)) return;
  if (skip_on_error(state, launch()) || skip_on_error(state, gpu::synchronize())) return;
  for (auto _ : state) {
    Status s = timer.start();
    if (s.is_ok()) s = launch();
    if (s.is_ok()) s = timer.stop();
    Result<double> seconds = s.is_ok() ? timer.elapsed_seconds() : Result<double>(s);
    if (skip_on_error(state, seconds.status())) return;
    state.SetIterationTime(seconds.value());
  }
}

// Device-to-device copy bandwidth (bytes read + written per second), measured
// once per process as the median of a few copies of kGpuBytes.
double copy_bandwidth() {
  static const double bandwidth = [] {
    gpu::DeviceBuffer a, b;
    gpu::GpuTimer timer;
    Result<gpu::DeviceBuffer> ra = gpu::DeviceBuffer::allocate(kGpuBytes);
    Result<gpu::DeviceBuffer> rb = gpu::DeviceBuffer::allocate(kGpuBytes);
    Result<gpu::GpuTimer> rt = gpu::GpuTimer::create();
    if (!ra.is_ok() || !rb.is_ok() || !rt.is_ok()) return 0.0;
    a = ra.take(), b = rb.take(), timer = rt.take();
    std::vector<double> times;
    for (int i = 0; i < 11; ++i) {
      if (!timer.start().is_ok() || !gpu::copy_async(b.data(), a.data(), kGpuBytes, nullptr).is_ok() ||
          !timer.stop().is_ok()) {
        return 0.0;
      }
      Result<double> t = timer.elapsed_seconds();
      if (!t.is_ok()) return 0.0;
      if (i > 0) times.push_back(t.value());  // the first copy warms up
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    return 2.0 * kGpuBytes / times[times.size() / 2];
  }();
  return bandwidth;
}

// Reported as a rate, so benchmark divides by the time: (bytes/s) / copy bandwidth.
void report_copy_fraction(benchmark::State& state, int64_t bytes_per_iteration) {
  double copy = copy_bandwidth();
  if (copy <= 0) return;
  state.counters["copy_fraction"] =
      benchmark::Counter(static_cast<double>(bytes_per_iteration) / copy, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GpuMemcpyD2D(benchmark::State& state) {
  if (skip_without_device(state)) return;
  gpu::DeviceBuffer src, dst;
  if (!take(state, gpu::DeviceBuffer::allocate(kGpuBytes), src) ||
      !take(state, gpu::DeviceBuffer::allocate(kGpuBytes), dst)) {
    return;
  }
  run_timed(state, [&] { return gpu::copy_async(dst.data(), src.data(), kGpuBytes, nullptr); });
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(2 * kGpuBytes));
}

// A device tensor of kGpuElements with its compaction, for both benchmarks.
struct GpuInput {
  BlockLayout layout{kGpuElements, 1};
  gpu::DeviceBuffer tensor, scratch, indices, values, count;
  uint64_t n = 0;
  uint64_t last = 0;  // last non-zero block
};

bool make_gpu_input(benchmark::State& state, size_t block_size, double density, GpuInput& in) {
  in.layout = BlockLayout(kGpuElements, block_size);
  BlockRange all{0, in.layout.num_blocks()};
  std::vector<float> host = make_block_sparse(kGpuElements, block_size, density);
  if (!take(state, gpu::DeviceBuffer::allocate(kGpuBytes), in.tensor) ||
      !take(state, gpu::DeviceBuffer::allocate(gpu::compact_scratch_bytes(in.layout, all)), in.scratch) ||
      !take(state, gpu::DeviceBuffer::allocate(all.size() * 8), in.indices) ||
      !take(state, gpu::DeviceBuffer::allocate(compacted_values_capacity(in.layout, all) * 4), in.values) ||
      !take(state, gpu::DeviceBuffer::allocate(8), in.count) ||
      skip_on_error(state, gpu::copy_to_device(in.tensor.data(), host.data(), kGpuBytes)) ||
      skip_on_error(state, gpu::compact_blocks_async(in.tensor.data(), 4, in.layout, all, in.scratch.data(),
                                                     in.scratch.size(), in.indices.as<uint64_t>(), in.values.data(),
                                                     in.count.as<uint64_t>())) ||
      skip_on_error(state, gpu::copy_to_host(&in.n, in.count.data(), 8))) {
    return false;
  }
  if (in.n > 0 && skip_on_error(state, gpu::copy_to_host(&in.last, in.indices.as<uint64_t>() + in.n - 1, 8))) {
    return false;
  }
  return true;
}

void BM_GpuCompact(benchmark::State& state) {
  if (skip_without_device(state)) return;
  GpuInput in;
  if (!make_gpu_input(state, static_cast<size_t>(state.range(0)), density_of(state.range(1)), in)) return;
  BlockRange all{0, in.layout.num_blocks()};
  run_timed(state, [&] {
    return gpu::compact_blocks_async(in.tensor.data(), 4, in.layout, all, in.scratch.data(), in.scratch.size(),
                                     in.indices.as<uint64_t>(), in.values.data(), in.count.as<uint64_t>());
  });
  const int64_t bytes = compaction_bytes(in.layout, in.n, in.last);
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["blocks_out"] = static_cast<double>(in.n);
  report_copy_fraction(state, bytes);
}

void BM_GpuScatter(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const bool zero = state.range(2) != 0;
  GpuInput in;
  gpu::DeviceBuffer out;
  if (!make_gpu_input(state, static_cast<size_t>(state.range(0)), density_of(state.range(1)), in) ||
      !take(state, gpu::DeviceBuffer::allocate(kGpuBytes), out)) {
    return;
  }
  const ScatterMode mode = zero ? ScatterMode::kZeroUnlisted : ScatterMode::kListedOnly;
  run_timed(state, [&] {
    return gpu::scatter_blocks_async(in.indices.as<uint64_t>(), in.n, in.values.data(), 4, in.layout,
                                     {0, in.layout.num_blocks()}, out.data(), mode);
  });
  const int64_t bytes = scatter_bytes(in.layout, in.n, in.last, zero);
  state.SetBytesProcessed(state.iterations() * bytes);
  report_copy_fraction(state, bytes);
}

BENCHMARK(BM_GpuMemcpyD2D)->UseManualTime()->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_GpuCompact)
    ->ArgNames({"block", "permille"})
    ->ArgsProduct({{32, 256, 1024}, {10, 100, 500, 1000}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_GpuScatter)
    ->ArgNames({"block", "permille", "zero_rest"})
    ->ArgsProduct({{32, 256, 1024}, {10, 100, 500, 1000}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace omnib::bench
