#include "tools/workloads/scattered_workload.h"

#include <cstring>

namespace omnib {

Result<std::unique_ptr<Workload>> ScatteredWorkload::create(const WorkloadSpec& spec) {
  return std::unique_ptr<Workload>(new ScatteredWorkload(spec));
}

void ScatteredWorkload::fill(int rank, const TensorView& out) const {
  const size_t esize = dtype_size(out.dtype);
  auto* base = static_cast<uint8_t*>(out.data);
  std::memset(base, 0, out.bytes());
  const uint64_t key = mix64(spec_.seed * 0x9fb21c651e98df25ull + static_cast<uint64_t>(rank) + 0x51);
  for (size_t i = 0; i < out.count; ++i) {
    if (unit_interval(mix64(key ^ (i * 0xd6e8feb86659fd93ull))) < spec_.density)
      write_nonzero_values(out.dtype, spec_.seed, rank, i, 1, base + i * esize);
  }
}

}  // namespace omnib
