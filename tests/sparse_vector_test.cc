#include "baselines/sparse_vector.h"

#include <gtest/gtest.h>

#include <bit>
#include <vector>

namespace omnib {
namespace {

std::vector<uint32_t> floats(std::initializer_list<float> xs) {
  std::vector<uint32_t> out;
  for (float x : xs) out.push_back(std::bit_cast<uint32_t>(x));
  return out;
}

std::vector<float> as_floats(const std::vector<uint32_t>& bits) {
  std::vector<float> out;
  for (uint32_t b : bits) out.push_back(std::bit_cast<float>(b));
  return out;
}

TEST(SparseVector, DenseSwitchFollowsSparcmlSizes) {
  // 4-byte elements: a pair costs 8 bytes, a dense element 4.
  EXPECT_FALSE(dense_is_smaller(49, 100, 4));
  EXPECT_TRUE(dense_is_smaller(50, 100, 4));
  EXPECT_TRUE(dense_is_smaller(0, 0, 4));
  EXPECT_FALSE(dense_is_smaller(0, 1, 4));
}

TEST(SparseVector, ExtractKeepsNonZerosInOrderIncludingNegativeZero) {
  auto t = floats({0, 1.5f, 0, -0.0f, 0, -2});
  SparseVector v;
  extract_pairs(t.data(), 1, 6, v);
  EXPECT_FALSE(v.dense);
  EXPECT_EQ(v.begin, 1u);
  EXPECT_EQ(v.end, 6u);
  EXPECT_EQ(v.indices, (std::vector<uint32_t>{1, 3, 5}));
  EXPECT_EQ(as_floats(v.values), (std::vector<float>{1.5f, -0.0f, -2}));
}

TEST(SparseVector, ExtractSmallerPointsIntoDenseInput) {
  auto t = floats({1, 2, 0, 4});
  SparseVector scratch;
  VectorView v = extract_smaller(t.data(), 0, 4, 4, scratch);
  EXPECT_TRUE(v.dense);
  EXPECT_EQ(v.values, t.data());
  EXPECT_EQ(v.items(), 4u);

  auto sparse = floats({0, 0, 0, 4, 0, 0});
  v = extract_smaller(sparse.data(), 2, 6, 4, scratch);
  EXPECT_FALSE(v.dense);
  ASSERT_EQ(v.pairs, 1u);
  EXPECT_EQ(v.indices[0], 3u);
}

TEST(SparseVector, LoadSmallerOwnsItsCopy) {
  auto t = floats({1, 2, 0, 4});
  SparseVector v;
  load_smaller(t.data(), 1, 4, 4, v);
  EXPECT_TRUE(v.dense);
  EXPECT_EQ(as_floats(v.values), (std::vector<float>{2, 0, 4}));
}

TEST(SparseVector, MergeSumsTheUnionAndKeepsCancelledPairs) {
  SparseVector a, b, scratch;
  a.reset(0, 100, false);
  a.indices = {1, 5, 9};
  a.values = floats({1, 2, 3});
  b.reset(0, 100, false);
  b.indices = {0, 5, 9, 50};
  b.values = floats({7, 0.5f, -3, 8});
  merge_into(DType::kFloat32, a, b, 4, scratch);
  EXPECT_FALSE(a.dense);
  EXPECT_EQ(a.indices, (std::vector<uint32_t>{0, 1, 5, 9, 50}));
  EXPECT_EQ(as_floats(a.values), (std::vector<float>{7, 1, 2.5f, 0, 8}));
}

TEST(SparseVector, MergeTurnsDenseWhenThatIsSmaller) {
  SparseVector a, b, scratch;
  a.reset(10, 14, false);
  a.indices = {10};
  a.values = {5};
  b.reset(10, 14, false);
  b.indices = {13};
  b.values = {7};
  merge_into(DType::kInt32, a, b, 4, scratch);  // 2 pairs = 16 bytes >= 4 elements = 16 bytes
  EXPECT_TRUE(a.dense);
  EXPECT_EQ(a.values, (std::vector<uint32_t>{5, 0, 0, 7}));
}

TEST(SparseVector, MergeOfDenseAndSparseInEitherOrder) {
  SparseVector dense, sparse, scratch;
  dense.reset(0, 4, true);
  dense.values = {1, 1, 1, 1};
  sparse.reset(0, 4, false);
  sparse.indices = {2};
  sparse.values = {static_cast<uint32_t>(-3)};

  SparseVector acc = dense;
  merge_into(DType::kInt32, acc, sparse, 4, scratch);
  EXPECT_TRUE(acc.dense);
  EXPECT_EQ(acc.values, (std::vector<uint32_t>{1, 1, static_cast<uint32_t>(-2), 1}));

  acc = sparse;
  merge_into(DType::kInt32, acc, dense, 4, scratch);
  EXPECT_TRUE(acc.dense);
  EXPECT_EQ(acc.values, (std::vector<uint32_t>{1, 1, static_cast<uint32_t>(-2), 1}));
}

TEST(SparseVector, WriteViewZeroesWhatASparseSliceLacks) {
  std::vector<uint32_t> out(6, 99);
  SparseVector v;
  v.reset(1, 5, false);
  v.indices = {2, 4};
  v.values = {20, 40};
  write_view(DType::kInt32, v.view(), out.data());
  EXPECT_EQ(out, (std::vector<uint32_t>{99, 0, 20, 0, 40, 99}));

  v.reset(2, 4, true);
  v.values = {7, 8};
  write_view(DType::kInt32, v.view(), out.data());
  EXPECT_EQ(out, (std::vector<uint32_t>{99, 0, 7, 8, 40, 99}));
}

TEST(SparseVector, AddViewIntoAnOffsetBuffer) {
  std::vector<uint32_t> slice(3, 1);  // holds elements 10..12
  SparseVector v;
  v.reset(10, 13, false);
  v.indices = {10, 12};
  v.values = {5, 6};
  add_view_into(DType::kInt32, v.view(), slice.data(), 10);
  EXPECT_EQ(slice, (std::vector<uint32_t>{6, 1, 7}));
}

}  // namespace
}  // namespace omnib
