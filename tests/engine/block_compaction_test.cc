// The CPU reference of block compaction and scatter against a naive,
// element-by-element model of the contract, on random block-sparse inputs.
#include "engine/blocks/block_compaction.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/support/block_compaction_inputs.h"

namespace omnib {
namespace {

using test_inputs::kNegativeZero;
using test_inputs::kPoison;

// The full range, and the middle shard of three (a range not starting at 0).
std::vector<BlockRange> ranges_of(const BlockLayout& layout) {
  return {{0, layout.num_blocks()}, layout.shard_range(1, 3)};
}

// Output buffers one entry longer than the contract needs, all poisoned: the
// tail must stay poisoned (no write past the result).
template <typename W>
void expect_compaction(const std::vector<W>& t, const BlockLayout& layout, BlockRange range) {
  const W poison = test_inputs::Bits<W>::kPoison;
  test_inputs::Compacted<W> want = test_inputs::naive_compact(t, layout, range);
  std::vector<uint64_t> indices(range.size() + 1, kPoison);
  std::vector<W> values(compacted_values_capacity(layout, range) + 1, poison);
  Result<uint64_t> n = compact_blocks(t.data(), sizeof(W), layout, range, indices.data(), values.data());
  ASSERT_TRUE(n.is_ok()) << n.status().message();
  ASSERT_EQ(n.value(), want.indices.size());
  EXPECT_EQ(std::vector<uint64_t>(indices.begin(), indices.begin() + n.value()), want.indices);
  EXPECT_EQ(std::vector<W>(values.begin(), values.begin() + want.values.size()), want.values);
  for (size_t i = n.value(); i < indices.size(); ++i) ASSERT_EQ(indices[i], kPoison) << "index " << i;
  for (size_t i = want.values.size(); i < values.size(); ++i) ASSERT_EQ(values[i], poison) << "value " << i;
}

template <typename W>
void compaction_sweep(size_t block_size, double density) {
  uint64_t seed = 1;
  for (size_t count : test_inputs::interesting_counts(block_size)) {
    std::vector<W> t = test_inputs::make_block_sparse<W>(count, block_size, density, seed++);
    BlockLayout layout(count, block_size);
    for (BlockRange r : ranges_of(layout)) {
      SCOPED_TRACE(test_inputs::describe(count, block_size, density, r));
      expect_compaction(t, layout, r);
    }
  }
}

template <typename W>
void scatter_sweep(size_t block_size, double density) {
  uint64_t seed = 100;
  for (size_t count : test_inputs::interesting_counts(block_size)) {
    BlockLayout layout(count, block_size);
    std::vector<W> before = test_inputs::make_block_sparse<W>(count, block_size, 0.5, seed++);
    for (BlockRange r : ranges_of(layout)) {
      SCOPED_TRACE(test_inputs::describe(count, block_size, density, r));
      test_inputs::Compacted<W> packed = test_inputs::make_packed<W>(layout, r, density, seed++);
      uint64_t n = packed.indices.size();
      ASSERT_EQ(packed.values.size(), n ? packed_elements(layout, n, packed.indices.back()) : 0);
      auto scatter = [&](std::vector<W>& out, ScatterMode mode) {
        return scatter_blocks(packed.indices.data(), n, packed.values.data(), sizeof(W), layout, r, out.data(), mode)
            .is_ok();
      };

      // In place, listed blocks only: everything else keeps its old value.
      std::vector<W> out = before;
      ASSERT_TRUE(scatter(out, ScatterMode::kListedOnly));
      EXPECT_EQ(out, test_inputs::naive_scatter(before, packed, layout, r, false));

      // In place, zeroing the rest of the range.
      out = before;
      ASSERT_TRUE(scatter(out, ScatterMode::kZeroUnlisted));
      EXPECT_EQ(out, test_inputs::naive_scatter(before, packed, layout, r, true));

      // Into a separate, poisoned output: the whole range is written, nothing else.
      std::vector<W> poisoned(count, test_inputs::Bits<W>::kPoison);
      out = poisoned;
      ASSERT_TRUE(scatter(out, ScatterMode::kZeroUnlisted));
      EXPECT_EQ(out, test_inputs::naive_scatter(poisoned, packed, layout, r, true));
    }
  }
}

// Block size, density, element size (4: float and int32, 2: bf16 and half).
class CompactionSweep : public ::testing::TestWithParam<std::tuple<size_t, double, size_t>> {};

TEST_P(CompactionSweep, MatchesNaiveReference) {
  auto [block_size, density, elem_size] = GetParam();
  if (elem_size == 2)
    compaction_sweep<uint16_t>(block_size, density);
  else
    compaction_sweep<uint32_t>(block_size, density);
}

TEST_P(CompactionSweep, ScatterMatchesNaiveReference) {
  auto [block_size, density, elem_size] = GetParam();
  if (elem_size == 2)
    scatter_sweep<uint16_t>(block_size, density);
  else
    scatter_sweep<uint32_t>(block_size, density);
}

INSTANTIATE_TEST_SUITE_P(BlockSizesAndDensities, CompactionSweep,
                         ::testing::Combine(::testing::Values(1, 7, 32, 256, 1024, 4096),
                                            ::testing::Values(0.0, 0.01, 0.5, 1.0), ::testing::Values(4, 2)),
                         [](const auto& info) {
                           return "B" + std::to_string(std::get<0>(info.param)) + "_D" +
                                  std::to_string(static_cast<int>(std::get<1>(info.param) * 100)) + "_E" +
                                  std::to_string(std::get<2>(info.param));
                         });

TEST(BlockCompaction, NegativeZeroIsZeroButNegativeDenormalIsNot) {
  BlockLayout layout(12, 4);
  std::vector<uint32_t> t(12, 0);
  t[1] = kNegativeZero;  // block 0: only -0.0 and +0.0
  t[3] = kNegativeZero;
  t[4] = kNegativeZero;  // block 1: -0.0 next to a negative denormal
  t[6] = 0x80000001u;
  t[11] = 1;  // block 2: the int32 1 (a denormal as a float)
  std::vector<uint64_t> indices(3, kPoison);
  std::vector<uint32_t> values(12, kPoison);
  Result<uint64_t> n = compact_blocks(t.data(), 4, layout, {0, 3}, indices.data(), values.data());
  ASSERT_TRUE(n.is_ok());
  ASSERT_EQ(n.value(), 2u);
  EXPECT_EQ(indices[0], 1u);
  EXPECT_EQ(indices[1], 2u);
  EXPECT_EQ(std::vector<uint32_t>(values.begin(), values.begin() + 8),
            (std::vector<uint32_t>{kNegativeZero, 0, 0x80000001u, 0, 0, 0, 0, 1}));
  EXPECT_EQ(values[8], kPoison);
}

TEST(BlockCompaction, ShortLastBlockPacksOnlyItsElements) {
  BlockLayout layout(10, 4);  // blocks of 4, 4 and 2
  std::vector<uint32_t> t = {0, 0, 0, 0, 5, 0, 0, 0, 0, 7};
  std::vector<uint64_t> indices(3, kPoison);
  std::vector<uint32_t> values(compacted_values_capacity(layout, {0, 3}) + 1, kPoison);
  Result<uint64_t> n = compact_blocks(t.data(), 4, layout, {0, 3}, indices.data(), values.data());
  ASSERT_TRUE(n.is_ok());
  ASSERT_EQ(n.value(), 2u);
  EXPECT_EQ(packed_elements(layout, 2, indices[1]), 6u);
  EXPECT_EQ(std::vector<uint32_t>(values.begin(), values.begin() + 6), (std::vector<uint32_t>{5, 0, 0, 0, 0, 7}));
  EXPECT_EQ(values[6], kPoison);
}

TEST(BlockCompaction, RoundTripRestoresTheTensorUpToTheSignOfZero) {
  for (size_t block_size : {1, 7, 256}) {
    size_t count = 1000 * block_size + 3;
    BlockLayout layout(count, block_size);
    std::vector<uint32_t> t = test_inputs::make_block_sparse(count, block_size, 0.1, block_size);
    BlockRange all{0, layout.num_blocks()};
    std::vector<uint64_t> indices(all.size());
    std::vector<uint32_t> values(compacted_values_capacity(layout, all));
    Result<uint64_t> n = compact_blocks(t.data(), 4, layout, all, indices.data(), values.data());
    ASSERT_TRUE(n.is_ok());
    std::vector<uint32_t> out(count, kPoison);
    ASSERT_TRUE(scatter_blocks(indices.data(), n.value(), values.data(), 4, layout, all, out.data(),
                               ScatterMode::kZeroUnlisted).is_ok());
    // Zero blocks come back as +0.0 wherever they held -0.0; all else is exact.
    for (size_t i = 0; i < count; ++i) {
      bool same = out[i] == t[i] || (t[i] == kNegativeZero && out[i] == 0);
      ASSERT_TRUE(same) << "element " << i << ": " << out[i] << " for " << t[i];
    }
  }
}

TEST(BlockCompaction, EmptyRangeWritesNothing) {
  BlockLayout layout(100, 8);
  std::vector<uint32_t> t(100, 1);
  uint64_t index = kPoison;
  uint32_t value = kPoison;
  Result<uint64_t> n = compact_blocks(t.data(), 4, layout, {5, 5}, &index, &value);
  ASSERT_TRUE(n.is_ok());
  EXPECT_EQ(n.value(), 0u);
  EXPECT_EQ(index, kPoison);
  EXPECT_EQ(value, kPoison);
  EXPECT_TRUE(compact_blocks(nullptr, 4, BlockLayout(0, 8), {0, 0}, &index, &value).is_ok());
}

TEST(BlockCompaction, RejectsBadRangesAndIndexLists) {
  BlockLayout layout(100, 8);  // 13 blocks
  std::vector<uint32_t> t(100, 1), out(100);
  std::vector<uint64_t> indices(13);
  std::vector<uint32_t> values(100);
  EXPECT_EQ(compact_blocks(t.data(), 4, layout, {0, 14}, indices.data(), values.data()).status().code(), Code::kUsage);
  EXPECT_EQ(compact_blocks(t.data(), 4, layout, {5, 4}, indices.data(), values.data()).status().code(), Code::kUsage);
  EXPECT_EQ(compact_blocks(t.data(), 4, BlockLayout(100, 0), {0, 0}, indices.data(), values.data()).status().code(),
            Code::kUsage);

  auto scatter = [&](std::vector<uint64_t> list, BlockRange r) {
    return scatter_blocks(list.data(), list.size(), values.data(), 4, layout, r, out.data(), ScatterMode::kZeroUnlisted)
        .code();
  };
  EXPECT_EQ(scatter({1, 3, 12}, {0, 13}), Code::kOk);
  EXPECT_EQ(scatter({3, 1}, {0, 13}), Code::kUsage);   // out of order
  EXPECT_EQ(scatter({1, 1}, {0, 13}), Code::kUsage);   // repeated
  EXPECT_EQ(scatter({2, 13}, {0, 13}), Code::kUsage);  // past the tensor
  EXPECT_EQ(scatter({2, 9}, {3, 9}), Code::kUsage);    // outside the range
  EXPECT_EQ(scatter({1}, {0, 14}), Code::kUsage);      // range past the tensor
  EXPECT_EQ(compact_blocks(t.data(), 3, layout, {0, 13}, indices.data(), values.data()).status().code(),
            Code::kUsage);  // no 3-byte elements
}

TEST(BlockCompaction, SixteenBitNegativeZeroIsZero) {
  BlockLayout layout(8, 4);
  const std::vector<uint16_t> t = {0x8000, 0, 0x8000, 0, 0, 0x8001, 0, 0};  // block 1 holds a negative denormal
  std::vector<uint64_t> indices(2, kPoison);
  std::vector<uint16_t> values(8, 0x7bad);
  Result<uint64_t> n = compact_blocks(t.data(), 2, layout, {0, 2}, indices.data(), values.data());
  ASSERT_TRUE(n.is_ok());
  ASSERT_EQ(n.value(), 1u);
  EXPECT_EQ(indices[0], 1u);
  EXPECT_EQ(std::vector<uint16_t>(values.begin(), values.begin() + 5), (std::vector<uint16_t>{0, 0x8001, 0, 0, 0x7bad}));
}

}  // namespace
}  // namespace omnib
