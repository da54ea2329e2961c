// CPU reference compaction and scatter (engine/blocks/block_compaction.h): the
// --device cpu path, in bytes the operation must read and write per second.
#include <benchmark/benchmark.h>

#include "engine/blocks/block_compaction.h"
#include "tools/microbench/bench_inputs.h"

namespace omnib::bench {
namespace {

constexpr size_t kCpuElements = size_t{8} << 20;  // 32 MiB of fp32: well past the caches

void BM_CpuCompact(benchmark::State& state) {
  const size_t block_size = static_cast<size_t>(state.range(0));
  BlockLayout layout(kCpuElements, block_size);
  BlockRange all{0, layout.num_blocks()};
  std::vector<float> t = make_block_sparse(kCpuElements, block_size, density_of(state.range(1)));
  std::vector<uint64_t> indices(all.size());
  std::vector<float> values(compacted_values_capacity(layout, all));
  uint64_t n = 0;
  for (auto _ : state) {
    Result<uint64_t> r = compact_blocks(t.data(), sizeof(float), layout, all, indices.data(), values.data());
    if (!r.is_ok()) {
      state.SkipWithError(r.status().message().c_str());
      break;
    }
    n = r.value();
    benchmark::DoNotOptimize(values.data());
    benchmark::ClobberMemory();
  }
  state.counters["blocks_out"] = static_cast<double>(n);
  state.SetBytesProcessed(state.iterations() * compaction_bytes(layout, n, n ? indices[n - 1] : 0));
}

void BM_CpuScatter(benchmark::State& state) {
  const size_t block_size = static_cast<size_t>(state.range(0));
  const bool zero = state.range(2) != 0;
  BlockLayout layout(kCpuElements, block_size);
  Packed p = pack(make_block_sparse(kCpuElements, block_size, density_of(state.range(1))), layout);
  std::vector<float> out(kCpuElements, 2.0f);
  const ScatterMode mode = zero ? ScatterMode::kZeroUnlisted : ScatterMode::kListedOnly;
  for (auto _ : state) {
    Status s = scatter_blocks(p.indices.data(), p.n, p.values.data(), sizeof(float), layout, {0, layout.num_blocks()},
                              out.data(), mode);
    if (!s.is_ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * scatter_bytes(layout, p.n, p.n ? p.indices[p.n - 1] : 0, zero));
}

BENCHMARK(BM_CpuCompact)
    ->ArgNames({"block", "permille"})
    ->ArgsProduct({{1, 32, 256, 1024, 4096}, {10, 100, 1000}})
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_CpuScatter)
    ->ArgNames({"block", "permille", "zero_rest"})
    ->ArgsProduct({{32, 256, 1024}, {10, 100, 1000}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace omnib::bench
