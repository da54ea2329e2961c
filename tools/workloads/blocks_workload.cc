#include "tools/workloads/blocks_workload.h"

#include <cmath>
#include <cstring>

#include "engine/blocks/block_layout.h"

namespace omnib {

Result<std::unique_ptr<Workload>> BlocksWorkload::create(const WorkloadSpec& spec) {
  const Overlap& o = spec.overlap;
  if (!o.random) {
    // [0, f*d) shared by all; then one slice of (1-f)*d per rank.
    const double used = o.shared_fraction * spec.density + spec.nodes * (1 - o.shared_fraction) * spec.density;
    if (used > 1 + 1e-12)
      return usage_error("--overlap " + o.text() + " with --density " + std::to_string(spec.density) + " on " +
                         std::to_string(spec.nodes) +
                         " nodes needs more blocks than exist: lower the density or raise the overlap "
                         "(private blocks need density*(1-overlap)*nodes + density*overlap <= 1)");
  }
  return std::unique_ptr<Workload>(new BlocksWorkload(spec));
}

bool BlocksWorkload::block_nonzero(int rank, uint64_t b) const {
  const double d = spec_.density;
  if (spec_.overlap.random) {
    uint64_t h = mix64(mix64(spec_.seed * 0x2545f4914f6cdd1dull + static_cast<uint64_t>(rank)) ^ b);
    return unit_interval(h) < d;
  }
  // One draw per block, the same on every rank, decides who holds it.
  const double u = unit_interval(mix64(mix64(spec_.seed) ^ (b * 0x9e3779b97f4a7c15ull)));
  const double shared = spec_.overlap.shared_fraction * d;
  if (u < shared) return true;
  const double slice = (1 - spec_.overlap.shared_fraction) * d;
  if (slice <= 0) return false;
  const auto owner = static_cast<int64_t>(std::floor((u - shared) / slice));
  return owner == rank;
}

void BlocksWorkload::fill(int rank, const TensorView& out) const {
  const BlockLayout layout(out.count, spec_.block_size);
  const size_t esize = dtype_size(out.dtype);
  auto* base = static_cast<uint8_t*>(out.data);
  for (uint64_t b = 0; b < layout.num_blocks(); ++b) {
    const size_t begin = layout.block_begin(b);
    const size_t len = layout.block_length(b);
    if (block_nonzero(rank, b))
      write_nonzero_values(out.dtype, spec_.seed, rank, begin, len, base + begin * esize);
    else
      std::memset(base + begin * esize, 0, len * esize);
  }
}

}  // namespace omnib
