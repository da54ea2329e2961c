// The two passes over the tensor that every omni worker makes in every call,
// whatever the network: the scan for non-zero blocks (reads the input) and
// the writing of the output (blocks no shard sent are zeroed), through the
// engine's own HostBlockIo. Run by 1, 2 and 4 threads at once, each with
// its own 64 MiB tensors, it gives the least wall time that many colocated
// workers need per call on this machine before a byte is sent: the floor
// under omni's time when ranks share cores and memory bandwidth. `omni-bench
// allreduce --profile` times the same passes in every worker of a run at
// once as its memory floor (tools/measure/memory_floor.h).
#include <benchmark/benchmark.h>

#include "engine/omni/host_block_io.h"
#include "tools/microbench/bench_inputs.h"

namespace omnib::bench {
namespace {

constexpr size_t kElements = size_t{16} << 20;  // 64 MiB of fp32
constexpr size_t kBlock = 256;

void BM_WorkerTensorPasses(benchmark::State& state) {
  const BlockLayout layout(kElements, kBlock);
  const ShardMap map(layout.num_blocks(), 1, ShardLayout::kStriped,
                     ShardMap::default_stripe(kBlock * sizeof(float), layout.num_blocks(), 1));
  std::vector<float> in = make_block_sparse(kElements, kBlock, density_of(state.range(0)), 1 + state.thread_index());
  std::vector<float> out(kElements, 1.0f);
  auto io = std::move(HostBlockIo::create(1).value());
  (void)io->begin({in.data(), kElements, DType::kFloat32}, {out.data(), kElements, DType::kFloat32}, layout, map);
  std::vector<uint64_t> found;
  found.reserve(layout.num_blocks());
  for (auto _ : state) {
    found.clear();
    (void)io->find(0, layout.num_blocks(), false, found, nullptr);
    (void)io->begin_receive();
    (void)io->finish_receive(0);  // nothing arrived: the whole output is written
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["blocks"] = static_cast<double>(found.size());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(2 * kElements * sizeof(float)));
}

BENCHMARK(BM_WorkerTensorPasses)
    ->ArgName("permille")
    ->Arg(10)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace omnib::bench
