#include "tools/workloads/zipf_workload.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "engine/blocks/block_layout.h"

namespace omnib {
namespace {

// A seeded bijection on [0, n): a 4-round Feistel network on the smallest
// even-bit domain that holds n, walked until it lands inside [0, n).
class RowShuffle {
 public:
  RowShuffle(uint64_t n, uint64_t seed) : n_(n), key_(mix64(seed ^ 0x7a1f5e3c2b9d4861ull)) {
    while ((uint64_t{1} << (2 * half_bits_)) < n) ++half_bits_;
    mask_ = (uint64_t{1} << half_bits_) - 1;
  }
  uint64_t operator()(uint64_t x) const {
    do x = encrypt(x);
    while (x >= n_);
    return x;
  }

 private:
  uint64_t encrypt(uint64_t x) const {
    uint64_t left = x >> half_bits_, right = x & mask_;
    for (uint64_t round = 0; round < 4; ++round) {
      const uint64_t f = mix64(right ^ key_ ^ (round * 0x9e3779b97f4a7c15ull)) & mask_;
      const uint64_t next_left = right;
      right = left ^ f;
      left = next_left;
    }
    return (left << half_bits_) | right;
  }
  uint64_t n_;
  uint64_t key_;
  int half_bits_ = 1;
  uint64_t mask_ = 1;
};

// The scale c for which sum_k min(1, c * k^-alpha) over k = 1..n equals
// `target` (0 < target < n). `prefix[k]` = sum of j^-alpha for j <= k.
double solve_scale(const std::vector<double>& prefix, double alpha, double target) {
  const auto n = static_cast<double>(prefix.size() - 1);
  auto expected = [&](double c) {
    const double saturated = std::min(n, std::floor(std::pow(c, 1.0 / alpha)));
    const auto i0 = static_cast<size_t>(saturated);
    return saturated + c * (prefix.back() - prefix[i0]);
  };
  double lo = target / prefix.back();  // expected(lo) <= target
  double hi = std::pow(n, alpha);      // every row saturated: expected(hi) = n >= target
  for (int i = 0; i < 200 && hi / lo > 1 + 1e-12; ++i) {
    const double mid = std::sqrt(lo * hi);
    (expected(mid) < target ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

}  // namespace

Result<std::unique_ptr<Workload>> ZipfWorkload::create(const WorkloadSpec& spec) {
  if (!(spec.zipf_alpha > 0 && spec.zipf_alpha <= 10)) {
    std::ostringstream s;
    s << "zipf exponent " << spec.zipf_alpha << " is out of range: use --workload zipf:ALPHA with 0 < ALPHA <= 10";
    return usage_error(s.str());
  }
  if (!(spec.dense_fraction >= 0 && spec.dense_fraction <= spec.density))
    return usage_error("zipf: the dense prefix fraction must lie in [0, density]");
  return std::unique_ptr<Workload>(new ZipfWorkload(spec));
}

std::vector<double> ZipfWorkload::row_probabilities(size_t count) const {
  const BlockLayout layout(count, spec_.block_size);
  const uint64_t rows = layout.num_blocks();
  std::vector<double> p(rows, 0.0);
  const auto dense_rows =
      std::min<uint64_t>(rows, static_cast<uint64_t>(std::llround(spec_.dense_fraction * static_cast<double>(rows))));
  std::fill(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(dense_rows), 1.0);
  const uint64_t table_rows = rows - dense_rows;
  const double target = spec_.density * static_cast<double>(rows) - static_cast<double>(dense_rows);
  if (table_rows == 0 || target <= 0) return p;
  if (target >= static_cast<double>(table_rows)) {
    std::fill(p.begin() + static_cast<std::ptrdiff_t>(dense_rows), p.end(), 1.0);
    return p;
  }
  std::vector<double> prefix(table_rows + 1, 0.0);
  for (uint64_t k = 1; k <= table_rows; ++k)
    prefix[k] = prefix[k - 1] + std::pow(static_cast<double>(k), -spec_.zipf_alpha);
  const double c = solve_scale(prefix, spec_.zipf_alpha, target);
  const RowShuffle shuffle(table_rows, spec_.seed);
  for (uint64_t j = 0; j < table_rows; ++j) {
    const auto k = static_cast<double>((spec_.zipf_sorted ? j : shuffle(j)) + 1);
    p[dense_rows + j] = std::min(1.0, c * std::pow(k, -spec_.zipf_alpha));
  }
  return p;
}

void ZipfWorkload::fill(int rank, const TensorView& out) const {
  const BlockLayout layout(out.count, spec_.block_size);
  const std::vector<double> p = row_probabilities(out.count);
  const size_t esize = dtype_size(out.dtype);
  auto* base = static_cast<uint8_t*>(out.data);
  const uint64_t key = mix64(spec_.seed * 0xc2b2ae3d27d4eb4full + static_cast<uint64_t>(rank) + 0x2f);
  for (uint64_t row = 0; row < layout.num_blocks(); ++row) {
    const size_t begin = layout.block_begin(row);
    const size_t len = layout.block_length(row);
    const bool touched = p[row] >= 1.0 || unit_interval(mix64(key ^ (row * 0xd6e8feb86659fd93ull))) < p[row];
    if (touched)
      write_nonzero_values(out.dtype, spec_.seed, rank, begin, len, base + begin * esize);
    else
      std::memset(base + begin * esize, 0, len * esize);
  }
}

}  // namespace omnib
