#include "engine/block_layout.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/block_scan.h"

namespace omnib {
namespace {

TEST(BlockLayout, ShortLastBlock) {
  BlockLayout l(1000, 256);
  EXPECT_EQ(l.num_blocks(), 4u);
  EXPECT_EQ(l.block_length(0), 256u);
  EXPECT_EQ(l.block_length(3), 1000u - 768u);
  EXPECT_EQ(l.elements_in({0, 4}), 1000u);
  EXPECT_EQ(l.elements_in({1, 3}), 512u);
  EXPECT_EQ(l.elements_in({2, 2}), 0u);
}

TEST(BlockLayout, TensorSmallerThanOneBlock) {
  BlockLayout l(10, 256);
  EXPECT_EQ(l.num_blocks(), 1u);
  EXPECT_EQ(l.block_length(0), 10u);
}

TEST(BlockLayout, ShardRangesCoverEveryBlockOnce) {
  for (size_t blocks : {0, 1, 3, 7, 100, 1001}) {
    for (int shards : {1, 2, 3, 4, 8}) {
      BlockLayout l(blocks * 4, 4);
      uint64_t expected_begin = 0;
      for (int s = 0; s < shards; ++s) {
        BlockRange r = l.shard_range(s, shards);
        EXPECT_EQ(r.begin, expected_begin);
        EXPECT_LE(r.size(), blocks / shards + 1);
        expected_begin = r.end;
      }
      EXPECT_EQ(expected_begin, l.num_blocks());
    }
  }
}

TEST(BlockScan, FindsNonZeroBlocksAndTreatsNegativeZeroAsZero) {
  std::vector<float> t(1000, 0.0f);
  t[5] = 1.0f;       // block 0
  t[300] = -0.0f;    // block 1: negative zero is zero
  t[999] = -2.0f;    // block 3 (short)
  t[600] = 1e-38f;   // block 2: a denormal is non-zero
  auto blocks = nonzero_blocks(t.data(), sizeof(float), BlockLayout(t.size(), 256));
  EXPECT_EQ(blocks, (std::vector<uint64_t>{0, 2, 3}));
}

TEST(BlockScan, LongBlocksUseTheWideLoop) {
  std::vector<float> t(4096 * 3, 0.0f);
  t[4096 + 4000] = 3.0f;
  auto blocks = nonzero_blocks(t.data(), sizeof(float), BlockLayout(t.size(), 4096));
  EXPECT_EQ(blocks, (std::vector<uint64_t>{1}));
}

TEST(BlockScan, SixteenBitElementsMaskTheirOwnSignBit) {
  std::vector<uint16_t> t(1000, 0);
  t[5] = 0x3c00;    // block 0: 1.0 in half
  t[300] = 0x8000;  // block 1: negative zero is zero
  t[999] = 0x0001;  // block 3 (short): a denormal is non-zero
  auto blocks = nonzero_blocks(t.data(), 2, BlockLayout(t.size(), 256));
  EXPECT_EQ(blocks, (std::vector<uint64_t>{0, 3}));
  // Read as 4-byte words, 0x8000 in the low half of a word would count.
  EXPECT_TRUE(block_is_nonzero(reinterpret_cast<const uint32_t*>(t.data() + 300), 1));
  EXPECT_FALSE(block_is_nonzero(t.data() + 300, 2));
}

// The one-pass search with counts finds what the search finds, with the
// counts count_nonzero gives, for tiny and long blocks, both widths, a short
// last block, negative zeros and a range that starts mid-tensor.
TEST(BlockScan, FindAndCountAgreesWithFindThenCount) {
  std::mt19937 rng(7);
  for (size_t elem : {size_t{2}, size_t{4}}) {
    for (size_t block : {size_t{1}, size_t{7}, size_t{32}, size_t{33}, size_t{256}, size_t{4096}}) {
      for (double fill : {0.0, 0.003, 0.1, 1.0}) {
        const size_t count = 20000 + block / 2;  // a short last block
        std::vector<uint8_t> t(count * elem, 0);
        std::bernoulli_distribution hit(fill), negative_zero(0.05);
        for (size_t i = 0; i < count; ++i) {
          if (hit(rng)) t[i * elem] = 1;                       // a denormal
          else if (negative_zero(rng)) t[i * elem + elem - 1] = 0x80;  // -0.0: zero
        }
        const BlockLayout layout(count, block);
        const BlockRange range{layout.num_blocks() / 3, layout.num_blocks()};
        std::vector<uint64_t> want, got;
        std::vector<uint32_t> counts;
        find_nonzero_blocks(t.data(), elem, layout, range, want);
        find_and_count_nonzero_blocks(t.data(), elem, layout, range, got, counts);
        ASSERT_EQ(got, want) << elem << " " << block << " " << fill;
        ASSERT_EQ(counts.size(), got.size());
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_EQ(counts[i], count_nonzero(t.data() + layout.block_begin(got[i]) * elem,
                                             layout.block_length(got[i]), elem))
              << "block " << got[i];
      }
    }
  }
}

}  // namespace
}  // namespace omnib
