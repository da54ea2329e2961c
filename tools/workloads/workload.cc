#include "tools/workloads/workload.h"

#include <cstdlib>
#include <limits>
#include <sstream>

#include "engine/base/float16.h"
#include "tools/workloads/blocks_workload.h"
#include "tools/workloads/npy_workload.h"
#include "tools/workloads/scattered_workload.h"
#include "tools/workloads/topk_workload.h"
#include "tools/workloads/workload_choice.h"
#include "tools/workloads/zipf_workload.h"

namespace omnib {

std::string Overlap::text() const {
  if (random) return "random";
  if (shared_fraction == 1.0) return "full";
  if (shared_fraction == 0.0) return "none";
  std::ostringstream s;
  s << shared_fraction;
  return s.str();
}

Result<Overlap> parse_overlap(const std::string& text) {
  if (text == "random") return Overlap{true, 0};
  if (text == "full") return Overlap{false, 1};
  if (text == "none") return Overlap{false, 0};
  char* end = nullptr;
  double f = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(f >= 0 && f <= 1))
    return usage_error("--overlap '" + text + "' is not valid: use random, full, none, or a fraction in [0,1]");
  return Overlap{false, f};
}

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void write_nonzero_values(DType dtype, uint64_t seed, int rank, size_t first_index, size_t n, void* dst) {
  const uint64_t base = mix64(seed ^ (0x5851f42d4c957f2dull * (static_cast<uint64_t>(rank) + 1)));
  for (size_t i = 0; i < n; ++i) {
    uint64_t h = mix64(base + first_index + i);
    int magnitude = static_cast<int>(h % 8) + 1;  // 1..8
    int value = (h & 0x100) ? -magnitude : magnitude;
    const float half_step = 0.5f * static_cast<float>(value);  // exact in every float type
    switch (dtype) {
      case DType::kFloat32: static_cast<float*>(dst)[i] = half_step; break;
      case DType::kInt32: static_cast<int32_t*>(dst)[i] = value; break;
      case DType::kBFloat16: static_cast<uint16_t*>(dst)[i] = float_to_bf16(half_step); break;
      case DType::kFloat16: static_cast<uint16_t*>(dst)[i] = float_to_half(half_step); break;
    }
  }
}

int max_exact_ranks(DType dtype) {
  constexpr int kHalvesPerRank = 8;  // |value| <= 4, in steps of 0.5
  switch (dtype) {
    case DType::kBFloat16: return (1 << 8) / kHalvesPerRank;
    case DType::kFloat16: return (1 << 11) / kHalvesPerRank;
    case DType::kFloat32:
    case DType::kInt32: break;
  }
  return std::numeric_limits<int>::max();
}

Result<std::unique_ptr<Workload>> make_workload(const WorkloadSpec& spec) {
  if (!(spec.density >= 0 && spec.density <= 1))
    return usage_error("--density must be in [0,1] (the fraction of non-zero elements per rank)");
  if (spec.name == "blocks") return BlocksWorkload::create(spec);
  if (spec.name == "scattered") return ScatteredWorkload::create(spec);
  if (spec.name == "zipf") return ZipfWorkload::create(spec);
  if (spec.name == "topk") return TopkWorkload::create(spec);
  if (spec.name == "npy") return NpyWorkload::create(spec);
  return usage_error("unknown --workload '" + spec.name + "': use " + workload_names());
}

}  // namespace omnib
