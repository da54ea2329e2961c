#include "baselines/common/sparse_vector.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/base/float16.h"

namespace omnib {
namespace {

// Values as the raw bytes SparseVector keeps.
template <typename T>
std::vector<uint8_t> bytes_of(std::initializer_list<T> xs) {
  std::vector<uint8_t> out(xs.size() * sizeof(T));
  std::memcpy(out.data(), std::data(xs), out.size());
  return out;
}

std::vector<uint8_t> floats(std::initializer_list<float> xs) { return bytes_of(xs); }
std::vector<uint8_t> words(std::initializer_list<uint32_t> xs) { return bytes_of(xs); }

template <typename T>
std::vector<T> as(const std::vector<uint8_t>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

std::vector<float> as_floats(const std::vector<uint8_t>& bytes) { return as<float>(bytes); }
std::vector<uint32_t> as_words(const std::vector<uint8_t>& bytes) { return as<uint32_t>(bytes); }

std::vector<uint16_t> bf16s(std::initializer_list<float> xs) {
  std::vector<uint16_t> out;
  for (float x : xs) out.push_back(float_to_bf16(x));
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
  auto t = as_floats(floats({0, 1.5f, 0, -0.0f, 0, -2}));
  SparseVector v;
  extract_pairs(t.data(), 4, 1, 6, v);
  EXPECT_FALSE(v.dense);
  EXPECT_EQ(v.begin, 1u);
  EXPECT_EQ(v.end, 6u);
  EXPECT_EQ(v.indices, (std::vector<uint32_t>{1, 3, 5}));
  EXPECT_EQ(as_floats(v.values), (std::vector<float>{1.5f, -0.0f, -2}));
}

TEST(SparseVector, ExtractSmallerPointsIntoDenseInput) {
  auto t = as_floats(floats({1, 2, 0, 4}));
  SparseVector scratch;
  VectorView v = extract_smaller(t.data(), 0, 4, 4, scratch);
  EXPECT_TRUE(v.dense);
  EXPECT_EQ(v.values, reinterpret_cast<const uint8_t*>(t.data()));
  EXPECT_EQ(v.items(), 4u);

  auto sparse = as_floats(floats({0, 0, 0, 4, 0, 0}));
  v = extract_smaller(sparse.data(), 2, 6, 4, scratch);
  EXPECT_FALSE(v.dense);
  ASSERT_EQ(v.pairs, 1u);
  EXPECT_EQ(v.indices[0], 3u);
}

TEST(SparseVector, LoadSmallerOwnsItsCopy) {
  auto t = as_floats(floats({1, 2, 0, 4}));
  SparseVector v;
  load_smaller(t.data(), 1, 4, 4, v);
  EXPECT_TRUE(v.dense);
  EXPECT_EQ(as_floats(v.values), (std::vector<float>{2, 0, 4}));
}

TEST(SparseVector, MergeSumsTheUnionAndKeepsCancelledPairs) {
  SparseVector a, b, scratch;
  a.reset(0, 100, false, 4);
  a.indices = {1, 5, 9};
  a.values = floats({1, 2, 3});
  b.reset(0, 100, false, 4);
  b.indices = {0, 5, 9, 50};
  b.values = floats({7, 0.5f, -3, 8});
  merge_into(DType::kFloat32, a, b, scratch);
  EXPECT_FALSE(a.dense);
  EXPECT_EQ(a.indices, (std::vector<uint32_t>{0, 1, 5, 9, 50}));
  EXPECT_EQ(as_floats(a.values), (std::vector<float>{7, 1, 2.5f, 0, 8}));
}

TEST(SparseVector, MergeTurnsDenseWhenThatIsSmaller) {
  SparseVector a, b, scratch;
  a.reset(10, 14, false, 4);
  a.indices = {10};
  a.values = words({5});
  b.reset(10, 14, false, 4);
  b.indices = {13};
  b.values = words({7});
  merge_into(DType::kInt32, a, b, scratch);  // 2 pairs = 16 bytes >= 4 elements = 16 bytes
  EXPECT_TRUE(a.dense);
  EXPECT_EQ(as_words(a.values), (std::vector<uint32_t>{5, 0, 0, 7}));
}

TEST(SparseVector, MergeOfDenseAndSparseInEitherOrder) {
  SparseVector dense, sparse, scratch;
  dense.reset(0, 4, true, 4);
  dense.values = words({1, 1, 1, 1});
  sparse.reset(0, 4, false, 4);
  sparse.indices = {2};
  sparse.values = words({static_cast<uint32_t>(-3)});

  SparseVector acc = dense;
  merge_into(DType::kInt32, acc, sparse, scratch);
  EXPECT_TRUE(acc.dense);
  EXPECT_EQ(as_words(acc.values), (std::vector<uint32_t>{1, 1, static_cast<uint32_t>(-2), 1}));

  acc = sparse;
  merge_into(DType::kInt32, acc, dense, scratch);
  EXPECT_TRUE(acc.dense);
  EXPECT_EQ(as_words(acc.values), (std::vector<uint32_t>{1, 1, static_cast<uint32_t>(-2), 1}));
}

TEST(SparseVector, WriteViewZeroesWhatASparseSliceLacks) {
  std::vector<uint32_t> out(6, 99);
  SparseVector v;
  v.reset(1, 5, false, 4);
  v.indices = {2, 4};
  v.values = words({20, 40});
  write_view(DType::kInt32, v.view(), out.data());
  EXPECT_EQ(out, (std::vector<uint32_t>{99, 0, 20, 0, 40, 99}));

  v.reset(2, 4, true, 4);
  v.values = words({7, 8});
  write_view(DType::kInt32, v.view(), out.data());
  EXPECT_EQ(out, (std::vector<uint32_t>{99, 0, 7, 8, 40, 99}));
}

TEST(SparseVector, AddViewIntoAnOffsetBuffer) {
  std::vector<uint32_t> slice(3, 1);  // holds elements 10..12
  SparseVector v;
  v.reset(10, 13, false, 4);
  v.indices = {10, 12};
  v.values = words({5, 6});
  add_view_into(DType::kInt32, v.view(), slice.data(), 10);
  EXPECT_EQ(slice, (std::vector<uint32_t>{6, 1, 7}));
}

TEST(SparseVector, SixteenBitElements) {
  // A pair of 2-byte elements costs 6 bytes, a dense element 2.
  EXPECT_FALSE(dense_is_smaller(33, 100, 2));
  EXPECT_TRUE(dense_is_smaller(34, 100, 2));

  // 0x8000 (a -0.0) has a bit set: kept, like -0.0f.
  const std::vector<uint16_t> t = {0, 0x3c00, 0, 0x8000, 0, 0xc000};
  SparseVector v;
  extract_pairs(t.data(), 2, 0, 6, v);
  EXPECT_EQ(v.elem_size, 2u);
  EXPECT_EQ(v.indices, (std::vector<uint32_t>{1, 3, 5}));
  EXPECT_EQ(as<uint16_t>(v.values), (std::vector<uint16_t>{0x3c00, 0x8000, 0xc000}));

  // bf16 sums: pairs at the same index are added in fp32 and rounded back.
  SparseVector a, b, scratch;
  a.reset(0, 100, false, 2);
  a.indices = {1, 5};
  a.values = bytes_of<uint16_t>({float_to_bf16(1.5f), float_to_bf16(-2)});
  b.reset(0, 100, false, 2);
  b.indices = {5, 7};
  b.values = bytes_of<uint16_t>({float_to_bf16(0.5f), float_to_bf16(3)});
  merge_into(DType::kBFloat16, a, b, scratch);
  EXPECT_EQ(a.indices, (std::vector<uint32_t>{1, 5, 7}));
  EXPECT_EQ(as<uint16_t>(a.values), bf16s({1.5f, -1.5f, 3}));

  std::vector<uint16_t> out(101, 0xffff);
  write_view(DType::kBFloat16, a.view(), out.data());
  EXPECT_EQ(std::vector<uint16_t>(out.begin(), out.begin() + 8), bf16s({0, 1.5f, 0, 0, 0, -1.5f, 0, 3}));
  EXPECT_EQ(out[99], 0u);
  EXPECT_EQ(out[100], 0xffff);  // past the slice
  add_view_into(DType::kBFloat16, b.view(), out.data());
  EXPECT_EQ(std::vector<uint16_t>(out.begin(), out.begin() + 8), bf16s({0, 1.5f, 0, 0, 0, -1.0f, 0, 6}));
}

}  // namespace
}  // namespace omnib
