// CPU block aggregation (engine/blocks/reduce_ops.h add_into), the aggregator's
// inner loop: reads two operands and writes one.
#include <benchmark/benchmark.h>

#include <vector>

#include "engine/blocks/reduce_ops.h"

namespace omnib::bench {
namespace {

template <DType kType, typename T>
void BM_CpuAddInto(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<T> dst(n, T(1)), src(n, T(2));
  for (auto _ : state) {
    add_into(kType, dst.data(), src.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(3 * n * sizeof(T)));
}

// One block of 256, a batch's worth (in cache), and a tensor past the caches.
BENCHMARK(BM_CpuAddInto<DType::kFloat32, float>)->ArgName("elements")->Arg(256)->Arg(64 << 10)->Arg(8 << 20);
BENCHMARK(BM_CpuAddInto<DType::kInt32, int32_t>)->ArgName("elements")->Arg(256)->Arg(64 << 10)->Arg(8 << 20);

}  // namespace
}  // namespace omnib::bench
