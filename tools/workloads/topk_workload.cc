#include "tools/workloads/topk_workload.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace omnib {
namespace {

// Shares of the shared and the per-rank part (0.6^2 + 0.8^2 = 1).
constexpr float kShared = 0.6f;
constexpr float kPrivate = 0.8f;
constexpr size_t kMinLayer = 4096;
constexpr size_t kMaxLayers = 48;

// A standard-normal-like variate from one hash: the sum of four 16-bit
// uniforms, centred and scaled (Irwin-Hall; cheap and smooth enough to rank).
float gaussian_like(uint64_t h) {
  float sum = 0;
  for (int i = 0; i < 4; ++i) sum += static_cast<float>((h >> (16 * i)) & 0xffff) * (1.0f / 65536.0f);
  return (sum - 2.0f) * 1.7320508f;  // sqrt(12/4)
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Ranks the elements of one rank's gradient: key(i) is monotone in |g_i|
// (the bits of a non-negative float order like the float).
class MagnitudeKeys {
 public:
  MagnitudeKeys(uint64_t seed, int rank, size_t count)
      : seed_(seed),
        rank_key_(mix64(seed * 0xbf58476d1ce4e5b9ull + static_cast<uint64_t>(rank) + 0x77)),
        layer_len_(std::max(kMinLayer, (count + kMaxLayers - 1) / kMaxLayers)) {
    // Layer scales are log-normal and the same on every rank.
    for (size_t layer = 0; layer * layer_len_ < count; ++layer)
      scales_.push_back(std::exp(0.75f * gaussian_like(mix64(seed * 0x94d049bb133111ebull + layer + 0x11))));
  }
  uint32_t operator()(size_t i) const {
    const uint64_t spread = i * 0xd6e8feb86659fd93ull;
    const float shared = gaussian_like(mix64((seed_ + 0x3c6ef372fe94f82bull) ^ spread));
    const float own = gaussian_like(mix64(rank_key_ ^ spread));
    return float_bits(std::fabs(scales_[i / layer_len_] * (kShared * shared + kPrivate * own)));
  }

 private:
  uint64_t seed_;
  uint64_t rank_key_;
  size_t layer_len_;
  std::vector<float> scales_;
};

}  // namespace

Result<std::unique_ptr<Workload>> TopkWorkload::create(const WorkloadSpec& spec) {
  return std::unique_ptr<Workload>(new TopkWorkload(spec));
}

size_t TopkWorkload::kept(double density, size_t count) {
  const auto k = static_cast<size_t>(std::llround(density * static_cast<double>(count)));
  return std::min(k, count);
}

void TopkWorkload::fill(int rank, const TensorView& out) const {
  const size_t n = out.count;
  const size_t k = kept(spec_.density, n);
  const size_t esize = dtype_size(out.dtype);
  auto* base = static_cast<uint8_t*>(out.data);
  std::memset(base, 0, out.bytes());
  if (k == 0) return;
  const MagnitudeKeys magnitude_key(spec_.seed, rank, n);

  // Pass 1: histogram of the keys' top 16 bits finds the bin holding the
  // k-th largest key, without keeping a tensor-sized array of keys.
  std::vector<uint64_t> hist(1u << 16, 0);
  for (size_t i = 0; i < n; ++i) ++hist[magnitude_key(i) >> 16];
  size_t above = 0;  // keys in bins above `bin`
  uint32_t bin = 0xffff;
  while (above + hist[bin] < k) above += hist[bin--];
  // Pass 2: the exact k-th largest key within that bin.
  std::vector<uint32_t> in_bin;
  in_bin.reserve(hist[bin]);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t key = magnitude_key(i);
    if ((key >> 16) == bin) in_bin.push_back(key);
  }
  const size_t want = k - above;  // how many to take from this bin
  std::nth_element(in_bin.begin(), in_bin.begin() + static_cast<std::ptrdiff_t>(want - 1), in_bin.end(),
                   std::greater<uint32_t>());
  const uint32_t threshold = in_bin[want - 1];
  const auto above_in_bin =
      static_cast<size_t>(std::count_if(in_bin.begin(), in_bin.end(), [&](uint32_t v) { return v > threshold; }));
  // Keys equal to the threshold are taken in index order, so exactly k survive.
  size_t ties_left = want - above_in_bin;
  // Pass 3: keep what beats the threshold, and the first ties.
  for (size_t i = 0; i < n; ++i) {
    const uint32_t key = magnitude_key(i);
    bool keep = key > threshold;
    if (key == threshold && ties_left > 0) {
      keep = true;
      --ties_left;
    }
    if (keep) write_nonzero_values(out.dtype, spec_.seed, rank, i, 1, base + i * esize);
  }
}

}  // namespace omnib
