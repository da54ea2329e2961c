#include "tools/workloads/npy_workload.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "tools/workloads/npy_file.h"

namespace omnib {

std::string npy_rank_path(const std::string& dir, int rank) {
  return dir + "/rank" + std::to_string(rank) + ".npy";
}

Result<std::unique_ptr<NpyWorkload>> NpyWorkload::load(const WorkloadSpec& spec) {
  if (spec.input_dir.empty())
    return usage_error("--workload npy needs --input DIR, a folder holding rank0.npy, rank1.npy, ... (one per rank)");
  std::unique_ptr<NpyWorkload> w(new NpyWorkload(spec));
  // A float's sign bit alone (-0.0) is zero, as the block scan sees it.
  const uint32_t value_mask = spec.dtype == DType::kFloat32 ? 0x7fffffffu : 0xffffffffu;
  const bool world_known = spec.nodes > 0;
  for (int r = 0; !world_known || r < spec.nodes; ++r) {
    const std::string path = npy_rank_path(spec.input_dir, r);
    std::error_code ec;
    if (!world_known && r > 0 && !std::filesystem::exists(path, ec)) break;
    if (!std::filesystem::exists(path, ec))
      return usage_error(path + " is missing: --workload npy on " + std::to_string(std::max(spec.nodes, 1)) +
                         " nodes needs rank0.npy .. rank" + std::to_string(std::max(spec.nodes, 1) - 1) +
                         ".npy in " + spec.input_dir + " (docs/workloads.md)");
    auto header = read_npy_header(path, spec.dtype);
    if (!header.is_ok()) return header.status();
    if (r == 0) {
      w->count_ = header.value().count;
    } else if (header.value().count != w->count_) {
      return usage_error(path + " holds " + std::to_string(header.value().count) + " elements but " +
                         npy_rank_path(spec.input_dir, 0) + " holds " + std::to_string(w->count_) +
                         ": every rank's file must hold the same number of elements");
    }
    std::vector<uint64_t> bits((w->count_ + 63) / 64, 0);
    uint64_t nonzeros = 0;
    Status s = read_npy_elements(path, header.value(), [&](uint64_t first, const uint32_t* data, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        if (data[i] & value_mask) {
          const uint64_t at = first + i;
          bits[at / 64] |= uint64_t{1} << (at % 64);
          ++nonzeros;
        }
      }
    });
    if (!s.is_ok()) return s;
    w->nonzero_bits_.push_back(std::move(bits));
    w->nonzeros_.push_back(nonzeros);
  }
  return w;
}

Result<std::unique_ptr<Workload>> NpyWorkload::create(const WorkloadSpec& spec) {
  auto w = load(spec);
  if (!w.is_ok()) return w.status();
  return std::unique_ptr<Workload>(w.take());
}

double NpyWorkload::mean_density() const {
  if (count_ == 0 || nonzeros_.empty()) return 0;
  double sum = 0;
  for (uint64_t n : nonzeros_) sum += static_cast<double>(n) / static_cast<double>(count_);
  return sum / static_cast<double>(nonzeros_.size());
}

void NpyWorkload::fill(int rank, const TensorView& out) const {
  const size_t esize = dtype_size(out.dtype);
  auto* base = static_cast<uint8_t*>(out.data);
  std::memset(base, 0, out.bytes());
  if (rank < 0 || static_cast<size_t>(rank) >= nonzero_bits_.size()) return;
  const std::vector<uint64_t>& bits = nonzero_bits_[static_cast<size_t>(rank)];
  const size_t n = std::min<uint64_t>(out.count, count_);
  for (size_t word = 0; word * 64 < n; ++word) {
    for (uint64_t w = bits[word]; w != 0; w &= w - 1) {
      const size_t i = word * 64 + static_cast<size_t>(__builtin_ctzll(w));
      if (i < n) write_nonzero_values(out.dtype, spec_.seed, rank, i, 1, base + i * esize);
    }
  }
}

}  // namespace omnib
