// InputSupport: range counts and unions over per-element bit sets, checked
// against a plain count on random tensors, at word edges and partial ranges.
#include "engine/blocks/input_support.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace omnib {
namespace {

std::vector<float> random_tensor(size_t n, double density, uint32_t seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution hit(density);
  std::vector<float> t(n, 0.0f);
  for (auto& x : t)
    if (hit(rng)) x = 1.5f;
  return t;
}

TEST(InputSupport, CountsMatchAPlainCountOnEveryRange) {
  const size_t n = 1000;  // not a multiple of 64
  std::vector<std::vector<float>> ranks = {random_tensor(n, 0.1, 1), random_tensor(n, 0.5, 2), random_tensor(n, 0, 3)};
  ranks[2][63] = -0.0f;  // a negative zero is zero
  ranks[2][64] = 2.0f;
  InputSupport support(3, n);
  for (int r = 0; r < 3; ++r) support.set_rank(r, ranks[r].data(), sizeof(float));
  std::vector<float> sum(n);
  for (size_t i = 0; i < n; ++i) sum[i] = ranks[0][i] - ranks[0][i] + ranks[1][i];
  support.set_sum(sum.data(), sizeof(float));
  for (auto [b, e] : {std::pair<size_t, size_t>{0, n}, {0, 0}, {63, 65}, {64, 128}, {1, 999}, {500, 501}, {960, 1000}}) {
    SCOPED_TRACE(std::to_string(b) + ".." + std::to_string(e));
    uint64_t uni = 0, s = 0;
    for (int r = 0; r < 3; ++r) {
      uint64_t mine = 0;
      for (size_t i = b; i < e; ++i) mine += ranks[r][i] != 0.0f;
      EXPECT_EQ(support.elements(r, b, e), mine);
      EXPECT_EQ(support.any(r, b, e), mine > 0);
    }
    for (size_t i = b; i < e; ++i) {
      uni += ranks[0][i] != 0.0f || ranks[2][i] != 0.0f;
      s += sum[i] != 0.0f;
    }
    const int some[] = {0, 2};
    EXPECT_EQ(support.union_elements(some, b, e), uni);
    EXPECT_EQ(support.sum_elements(b, e), s);
  }
}

TEST(InputSupport, BlocksAreTheNonZeroBlocksInOrder) {
  std::vector<uint16_t> half(10, 0);  // 2-byte elements; 0x8000 is -0.0
  half[0] = 0x8000;
  half[4] = 0x3c00;
  half[9] = 1;
  InputSupport support(1, half.size());
  support.set_rank(0, half.data(), sizeof(uint16_t));
  EXPECT_EQ(support.blocks(0, BlockLayout(10, 3)), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(support.blocks(0, BlockLayout(10, 1)), (std::vector<uint64_t>{4, 9}));
}

}  // namespace
}  // namespace omnib
