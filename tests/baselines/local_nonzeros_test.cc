// oktopk's one-pass view of a rank's non-zeros must count and cut exactly
// what a fresh pass over the tensor would, whether it kept its pair list
// (sparse inputs) or not (dense ones).
#include "baselines/common/local_nonzeros.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "baselines/common/balanced_split.h"

namespace omnib {
namespace {

std::vector<uint32_t> tensor_of_density(size_t count, double density, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<uint32_t> t(count, 0);
  for (auto& w : t)
    if (std::uniform_real_distribution<double>(0, 1)(g) < density) w = g() | 1u;
  return t;
}

std::vector<Slice> cells_of(size_t count, size_t n) {
  std::vector<Slice> cells;
  for (size_t i = 0; i < n; ++i) cells.push_back(even_slice(count, static_cast<int>(n), static_cast<int>(i)));
  return cells;
}

void expect_same_view(const VectorView& got, const VectorView& want) {
  ASSERT_EQ(got.begin, want.begin);
  ASSERT_EQ(got.end, want.end);
  ASSERT_EQ(got.dense, want.dense);
  ASSERT_EQ(got.items(), want.items());
  ASSERT_EQ(got.elem_size, want.elem_size);
  for (size_t i = 0; i < got.items() * got.elem_size; ++i) ASSERT_EQ(got.values[i], want.values[i]) << i;
  for (size_t i = 0; !got.dense && i < got.items(); ++i) ASSERT_EQ(got.indices[i], want.indices[i]) << i;
}

class LocalNonzerosDensity : public ::testing::TestWithParam<double> {};

TEST_P(LocalNonzerosDensity, CountsAndPartsMatchAFreshPass) {
  constexpr size_t kCount = 300007;
  const auto t = tensor_of_density(kCount, GetParam(), 5);
  const auto coarse = cells_of(kCount, 1024);
  std::vector<uint32_t> got(coarse.size()), want(coarse.size());
  LocalNonzeros nz;
  nz.scan(t.data(), kCount, 4, coarse, got.data());
  count_nonzeros(t.data(), 4, coarse, want.data());
  EXPECT_EQ(got, want);
  // Inputs where pairs are smaller (density below 1/2) keep them.
  EXPECT_EQ(nz.kept_pairs(), GetParam() < 0.5) << GetParam();

  // Fine cells inside two buckets.
  std::vector<Slice> fine;
  for (size_t b : {17u, 600u})
    for (int i = 0; i < 7; ++i) {
      Slice s = even_slice(coarse[b].length, 7, i);
      s.begin += coarse[b].begin;
      fine.push_back(s);
    }
  std::vector<uint32_t> fine_got(fine.size()), fine_want(fine.size());
  nz.count(fine, fine_got.data());
  count_nonzeros(t.data(), 4, fine, fine_want.data());
  EXPECT_EQ(fine_got, fine_want);

  // Regions, including empty ones and one dense enough to go dense.
  for (Slice region : {Slice{0, kCount / 3}, Slice{kCount / 3, 0}, Slice{kCount / 3, kCount - kCount / 3}, Slice{5, 1}}) {
    SparseVector a, b;
    expect_same_view(nz.smaller(region, a), extract_smaller(t.data(), region.begin, region.end(), 4, b));
  }
}

INSTANTIATE_TEST_SUITE_P(Densities, LocalNonzerosDensity, ::testing::Values(0.0, 0.001, 0.05, 0.2, 0.45, 0.7, 1.0));

// Dense at the start, sparse after: the list is dropped early, and a sparse
// region is still sent as pairs.
TEST(LocalNonzeros, DenseHeadSparseTail) {
  constexpr size_t kCount = 100000;
  auto t = tensor_of_density(kCount, 0.01, 9);
  for (size_t i = 0; i < kCount / 8; ++i) t[i] = 7;
  const auto cells = cells_of(kCount, 1024);
  std::vector<uint32_t> counts(cells.size());
  LocalNonzeros nz;
  nz.scan(t.data(), kCount, 4, cells, counts.data());
  EXPECT_FALSE(nz.kept_pairs());
  SparseVector a, b;
  const Slice tail{kCount / 2, kCount / 2};
  const VectorView v = nz.smaller(tail, a);
  EXPECT_FALSE(v.dense);
  expect_same_view(v, extract_smaller(t.data(), tail.begin, tail.end(), 4, b));
}

}  // namespace
}  // namespace omnib
