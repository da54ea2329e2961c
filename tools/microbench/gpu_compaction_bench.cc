// GPU compaction and scatter kernels on a 256 MiB tensor (fp32, or bf16 as
// 2-byte elements), each against the copy that bounds it:
//  - compaction into device memory against a device-to-device cudaMemcpy of
//    the tensor: copy_fraction, the kernel's bytes per second over the copy's
//    (a one-pass kernel cannot move its bytes faster);
//  - compaction into mapped pinned host memory (the shipping path: what the
//    transport sends from) against what bounds it: a pinned device-to-host
//    cudaMemcpy of the bytes it writes (d2h_copy_us), or, where that is
//    quicker, reading the tensor at copy bandwidth (read_us; at low density
//    the kernel writes little and is bound by its read). ship_fraction is
//    the larger bound's time over the kernel's;
//  - scatter against the device-to-device copy, as compaction;
//  - compaction and taking (the sparse blocks' elements listed for the
//    host's bitmap and offsets packing) into pinned memory, on blocks with
//    one element in 16 non-zero, against the compaction alone of the same
//    tensor: take_overhead, the pair's time over the compaction's.
// Times are CUDA event pairs around kLaunchesPerPair launches (manual time,
// per launch), after one untimed warm-up. Without a device every benchmark
// here is skipped with the reason.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/block_compaction.cuh"
#include "cuda/block_taking.cuh"
#include "cuda/device_buffer.h"
#include "cuda/gpu_timer.h"
#include "tools/microbench/bench_inputs.h"

namespace omnib::bench {
namespace {

constexpr size_t kGpuBytes = size_t{256} << 20;
constexpr int kLaunchesPerPair = 8;

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

// Seconds per launch of `launch` (returns Status), timed over `launches` in
// one event pair.
template <typename Launch>
Result<double> time_launches(Launch&& launch, int launches) {
  auto timer = gpu::GpuTimer::create();
  if (!timer.is_ok()) return timer.status();
  OMNIB_RETURN_IF_ERROR(timer.value().start());
  for (int i = 0; i < launches; ++i) OMNIB_RETURN_IF_ERROR(launch());
  OMNIB_RETURN_IF_ERROR(timer.value().stop());
  auto seconds = timer.value().elapsed_seconds();
  if (!seconds.is_ok()) return seconds.status();
  return seconds.value() / launches;
}

// Times `launch` per iteration of the state, after one untimed warm-up.
template <typename Launch>
void run_timed(benchmark::State& state, Launch&& launch) {
  if (skip_on_error(state, launch()) || skip_on_error(state, gpu::synchronize())) return;
  for (auto _ : state) {
    Result<double> seconds = time_launches(launch, kLaunchesPerPair);
    if (skip_on_error(state, seconds.status())) return;
    state.SetIterationTime(seconds.value());
  }
}

// The median of a few timings of `launch`, for a reference copy.
template <typename Launch>
double median_seconds(Launch&& launch) {
  std::vector<double> times;
  if (!launch().is_ok()) return 0;  // warm-up
  for (int i = 0; i < 5; ++i) {
    Result<double> t = time_launches(launch, 2);
    if (!t.is_ok()) return 0;
    times.push_back(t.value());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// Device-to-device copy bandwidth (bytes read + written per second), measured
// once per process.
double copy_bandwidth() {
  static const double bandwidth = [] {
    Result<gpu::DeviceBuffer> a = gpu::DeviceBuffer::allocate(kGpuBytes);
    Result<gpu::DeviceBuffer> b = gpu::DeviceBuffer::allocate(kGpuBytes);
    if (!a.is_ok() || !b.is_ok()) return 0.0;
    const double t = median_seconds([&] { return gpu::copy_async(b.value().data(), a.value().data(), kGpuBytes, nullptr); });
    return t > 0 ? 2.0 * kGpuBytes / t : 0.0;
  }();
  return bandwidth;
}

// Reported as a rate, so benchmark divides by the time: (bytes/s) / copy bandwidth.
void report_copy_fraction(benchmark::State& state, int64_t bytes_per_launch) {
  const double copy = copy_bandwidth();
  if (copy <= 0) return;
  state.counters["copy_fraction"] =
      benchmark::Counter(static_cast<double>(bytes_per_launch) / copy, benchmark::Counter::kIsIterationInvariantRate);
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

void BM_GpuMemcpyD2HPinned(benchmark::State& state) {
  if (skip_without_device(state)) return;
  gpu::DeviceBuffer src;
  gpu::PinnedBuffer dst;
  if (!take(state, gpu::DeviceBuffer::allocate(kGpuBytes), src) ||
      !take(state, gpu::PinnedBuffer::allocate(kGpuBytes), dst)) {
    return;
  }
  run_timed(state, [&] { return gpu::copy_async(dst.host(), src.data(), kGpuBytes, nullptr); });
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kGpuBytes));
}

// Each block is all ones (1.0f, or bf16 1.0) with probability `density`,
// else all zero; decided per block by a hash, so 64M blocks take a moment.
// With `one_in` > 1 a non-zero block holds a one in every one_in-th element
// only (and its first), sparse enough inside for its elements to be taken.
std::vector<uint8_t> block_sparse_bytes(const BlockLayout& layout, size_t elem_size, double density,
                                        size_t one_in = 1) {
  std::vector<uint8_t> t(layout.count() * elem_size, 0);
  const auto threshold = static_cast<uint64_t>(density * 18446744073709551615.0);
  const uint32_t one32 = 0x3f800000u;
  const uint16_t one16 = 0x3f80u;
  for (uint64_t b = 0; b < layout.num_blocks(); ++b) {
    uint64_t h = b + 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    if (density < 1 && h >= threshold) continue;
    uint8_t* at = t.data() + layout.block_begin(b) * elem_size;
    for (size_t e = 0; e < layout.block_length(b); e += one_in, at += one_in * elem_size)
      std::memcpy(at, elem_size == 4 ? static_cast<const void*>(&one32) : &one16, elem_size);
  }
  return t;
}

// A 256 MiB device tensor and room for its compaction, in device or in
// mapped pinned memory.
struct GpuInput {
  size_t elem_size = 4;
  BlockLayout layout{1, 1};
  gpu::DeviceBuffer tensor;
  gpu::DeviceBuffer device_out[4];  // indices, values, nonzeros, segment counts
  gpu::PinnedBuffer pinned_out[4];
  gpu::CompactionOutputs out;
  uint64_t n = 0;     // compacted blocks
  uint64_t last = 0;  // last non-zero block
  std::vector<uint64_t> packed_indices;  // for the scatter
};

bool make_gpu_input(benchmark::State& state, size_t elem_size, bool pinned, GpuInput& in, size_t one_in = 1) {
  const auto block_size = static_cast<size_t>(state.range(0));
  in.elem_size = elem_size;
  in.layout = BlockLayout(kGpuBytes / elem_size, block_size);
  const BlockRange all{0, in.layout.num_blocks()};
  const size_t sizes[4] = {all.size() * 8, compacted_values_capacity(in.layout, all) * elem_size, all.size() * 4,
                           std::max<uint64_t>(1, gpu::compaction_segments(in.layout, in.elem_size, all)) * 4};
  void* outs[4];
  for (int i = 0; i < 4; ++i) {
    if (pinned) {
      if (!take(state, gpu::PinnedBuffer::allocate(sizes[i]), in.pinned_out[i])) return false;
      outs[i] = in.pinned_out[i].device();
    } else {
      if (!take(state, gpu::DeviceBuffer::allocate(sizes[i]), in.device_out[i])) return false;
      outs[i] = in.device_out[i].data();
    }
  }
  in.out = {static_cast<uint64_t*>(outs[0]), outs[1], static_cast<uint32_t*>(outs[2]), static_cast<uint32_t*>(outs[3])};
  const std::vector<uint8_t> host = block_sparse_bytes(in.layout, elem_size, density_of(state.range(1)), one_in);
  if (!take(state, gpu::DeviceBuffer::allocate(kGpuBytes), in.tensor) ||
      skip_on_error(state, gpu::copy_to_device(in.tensor.data(), host.data(), kGpuBytes)) ||
      skip_on_error(state, gpu::compact_blocks_async(in.tensor.data(), elem_size, in.layout, all, in.out)) ||
      skip_on_error(state, gpu::synchronize())) {
    return false;
  }
  // What was written, read back through the segments.
  const uint64_t segments = gpu::compaction_segments(in.layout, in.elem_size, all);
  std::vector<uint32_t> counts(segments);
  std::vector<uint64_t> indices(all.size());
  if (skip_on_error(state, gpu::copy_to_host(counts.data(), outs[3], segments * 4)) ||
      skip_on_error(state, gpu::copy_to_host(indices.data(), outs[0], all.size() * 8))) {
    return false;
  }
  gpu::for_each_compacted_slot(counts.data(), gpu::compaction_segment_blocks(in.layout, in.elem_size), 0, segments,
                               [&](uint64_t slot) { in.packed_indices.push_back(indices[slot]); });
  in.n = in.packed_indices.size();
  in.last = in.n ? in.packed_indices.back() : 0;
  return true;
}

// Bytes a compaction writes: the blocks, and per block its index and count;
// per segment its count.
int64_t compaction_written(const GpuInput& in) {
  const BlockRange all{0, in.layout.num_blocks()};
  return static_cast<int64_t>(packed_elements(in.layout, in.n, in.last) * in.elem_size + in.n * 12 +
                              gpu::compaction_segments(in.layout, in.elem_size, all) * 4);
}

void compact(benchmark::State& state, size_t elem_size, bool pinned) {
  if (skip_without_device(state)) return;
  GpuInput in;
  if (!make_gpu_input(state, elem_size, pinned, in)) return;
  const BlockRange all{0, in.layout.num_blocks()};
  auto launch = [&] { return gpu::compact_blocks_async(in.tensor.data(), elem_size, in.layout, all, in.out); };
  run_timed(state, launch);
  const int64_t written = compaction_written(in);
  const int64_t bytes = static_cast<int64_t>(kGpuBytes) + written;
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["blocks_out"] = static_cast<double>(in.n);
  if (!pinned) {
    report_copy_fraction(state, bytes);
    return;
  }
  // The shipping path's bound: a pinned device-to-host copy of the same bytes.
  gpu::DeviceBuffer from;
  gpu::PinnedBuffer to;
  if (written == 0 || !take(state, gpu::DeviceBuffer::allocate(static_cast<size_t>(written)), from) ||
      !take(state, gpu::PinnedBuffer::allocate(static_cast<size_t>(written)), to)) {
    return;
  }
  const double copy = median_seconds([&] { return gpu::copy_async(to.host(), from.data(), written, nullptr); });
  const double read = copy_bandwidth() > 0 ? static_cast<double>(kGpuBytes) / copy_bandwidth() : 0;
  const double kernel = median_seconds(launch);
  if (copy > 0 && kernel > 0) {
    state.counters["ship_fraction"] = std::max(copy, read) / kernel;
    state.counters["d2h_copy_us"] = copy * 1e6;
    state.counters["read_us"] = read * 1e6;
  }
}

void BM_GpuCompact(benchmark::State& state) { compact(state, 4, false); }
void BM_GpuCompactBf16(benchmark::State& state) { compact(state, 2, false); }
void BM_GpuCompactShip(benchmark::State& state) { compact(state, 4, true); }
void BM_GpuCompactShipBf16(benchmark::State& state) { compact(state, 2, true); }

// Compaction and taking into pinned memory, as CudaBlockIo queues them for
// batches that may go sparse, against the compaction alone.
void BM_GpuCompactTakeShip(benchmark::State& state) {
  if (skip_without_device(state)) return;
  constexpr size_t kOneIn = 16;
  GpuInput in;
  gpu::PinnedBuffer positions, values;
  if (!make_gpu_input(state, 4, true, in, kOneIn)) return;
  const BlockRange all{0, in.layout.num_blocks()};
  const uint64_t entries = all.size() * taken_slot_capacity(in.layout.block_size());
  if (!take(state, gpu::PinnedBuffer::allocate(entries * 4), positions) ||
      !take(state, gpu::PinnedBuffer::allocate(entries * 4), values)) {
    return;
  }
  const gpu::TakenOutputs taken{static_cast<uint32_t*>(positions.device()), values.device()};
  auto compact = [&] { return gpu::compact_blocks_async(in.tensor.data(), 4, in.layout, all, in.out); };
  auto compact_and_take = [&]() -> Status {
    OMNIB_RETURN_IF_ERROR(compact());
    return gpu::take_block_elements_async(in.tensor.data(), 4, in.layout, all, in.out, taken);
  };
  run_timed(state, compact_and_take);
  state.counters["blocks_out"] = static_cast<double>(in.n);
  const double alone = median_seconds(compact), both = median_seconds(compact_and_take);
  if (alone > 0 && both > 0) state.counters["take_overhead"] = both / alone;
}

void BM_GpuScatter(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const bool zero = state.range(2) != 0;
  GpuInput in;
  gpu::DeviceBuffer out, indices, values;
  if (!make_gpu_input(state, 4, false, in) || !take(state, gpu::DeviceBuffer::allocate(kGpuBytes), out) ||
      !take(state, gpu::DeviceBuffer::allocate(std::max<uint64_t>(1, in.n) * 8), indices) ||
      !take(state, gpu::DeviceBuffer::allocate(std::max<uint64_t>(1, packed_elements(in.layout, in.n, in.last)) * 4),
            values) ||
      skip_on_error(state, gpu::copy_to_device(indices.data(), in.packed_indices.data(), in.n * 8))) {
    return;
  }
  const ScatterMode mode = zero ? ScatterMode::kZeroUnlisted : ScatterMode::kListedOnly;
  run_timed(state, [&] {
    return gpu::scatter_blocks_async(indices.as<uint64_t>(), in.n, values.data(), 4, in.layout,
                                     {0, in.layout.num_blocks()}, out.data(), mode);
  });
  const int64_t bytes = scatter_bytes(in.layout, in.n, in.last, zero);
  state.SetBytesProcessed(state.iterations() * bytes);
  report_copy_fraction(state, bytes);
}

BENCHMARK(BM_GpuMemcpyD2D)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GpuMemcpyD2HPinned)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Block sizes: 1 (scalar accesses, one index per element), 32-1024 (the
// whole-blocks kernel with 16-byte accesses), 5000 (one block per tile, not a
// multiple of 8), 65536 (the streaming kernel). Densities 0.001 to 1.
void compaction_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"block", "permille"})
      ->ArgsProduct({{1, 32, 256, 1024, 5000, 65536}, {1, 10, 100, 1000}})
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_GpuCompact)->Apply(compaction_args);
BENCHMARK(BM_GpuCompactBf16)->Apply(compaction_args);
BENCHMARK(BM_GpuCompactShip)->Apply(compaction_args);
BENCHMARK(BM_GpuCompactShipBf16)->Apply(compaction_args);

BENCHMARK(BM_GpuCompactTakeShip)
    ->ArgNames({"block", "permille"})
    ->ArgsProduct({{32, 256, 1024, 65536}, {10, 100, 1000}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_GpuScatter)
    ->ArgNames({"block", "permille", "zero_rest"})
    ->ArgsProduct({{32, 256, 1024}, {10, 100, 1000}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace omnib::bench
