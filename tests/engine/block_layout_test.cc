#include "engine/blocks/block_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <random>

#include "engine/blocks/block_scan.h"
#include "engine/blocks/nonzero_mask.h"

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

// The scan that also takes elements finds and counts what find_and_count
// does, takes exactly the non-zeros (values and positions) of every block
// with at most length / kTakeDivisor of them (one, in a block shorter than
// kTakeDivisor), and no other block's.
TEST(BlockScan, TakingScanTakesTheNonZerosOfSparseBlocksOnly) {
  std::mt19937 rng(9);
  for (size_t elem : {size_t{2}, size_t{4}}) {
    for (size_t block : {size_t{1}, size_t{7}, size_t{16}, size_t{33}, size_t{256}, size_t{4096}}) {
      for (double fill : {0.0, 0.003, 0.1, 0.5}) {
        const size_t count = 30000 + block / 2;
        std::vector<uint8_t> t(count * elem, 0);
        std::bernoulli_distribution hit(fill), negative_zero(0.05);
        for (size_t i = 0; i < count; ++i) {
          if (hit(rng)) t[i * elem] = static_cast<uint8_t>(1 + i % 200);
          else if (negative_zero(rng)) t[i * elem + elem - 1] = 0x80;
        }
        const BlockLayout layout(count, block);
        const BlockRange range{layout.num_blocks() / 5, layout.num_blocks()};
        std::vector<uint64_t> want, got;
        std::vector<uint32_t> want_counts, counts;
        FoundElements taken;
        find_and_count_nonzero_blocks(t.data(), elem, layout, range, want, want_counts);
        find_count_and_take_nonzero_blocks(t.data(), elem, layout, range, got, counts, taken);
        ASSERT_EQ(got, want) << elem << " " << block << " " << fill;
        ASSERT_EQ(counts, want_counts);
        ASSERT_EQ(taken.first.size(), got.size());
        uint64_t listed = 0;
        for (size_t k = 0; k < got.size(); ++k) {
          const uint64_t len = layout.block_length(got[k]);
          if (counts[k] > (len < kTakeDivisor ? 1 : len / kTakeDivisor)) {
            ASSERT_EQ(taken.first[k], FoundElements::kNotTaken) << "block " << got[k];
            continue;
          }
          ASSERT_EQ(taken.first[k], listed) << "block " << got[k];
          const uint8_t* b = t.data() + layout.block_begin(got[k]) * elem;
          std::vector<uint32_t> positions;
          for (uint32_t i = 0; i < len; ++i) {
            uint32_t w = 0;
            std::memcpy(&w, b + i * elem, elem);
            if (w & (elem == 2 ? 0x7fffu : 0x7fffffffu)) positions.push_back(i);
          }
          ASSERT_EQ(std::vector<uint32_t>(taken.positions.begin() + static_cast<std::ptrdiff_t>(listed),
                                          taken.positions.begin() + static_cast<std::ptrdiff_t>(listed + counts[k])),
                    positions)
              << "block " << got[k];
          for (size_t j = 0; j < positions.size(); ++j)
            ASSERT_EQ(0, std::memcmp(taken.values.data() + (listed + j) * elem, b + positions[j] * elem, elem));
          listed += counts[k];
        }
        EXPECT_EQ(taken.positions.size(), listed);
        EXPECT_EQ(taken.values.size(), listed * elem);
      }
    }
  }
}

// Found blocks moved in runs (as the scan's distribution to shards does)
// keep each block's taken elements, and not-taken blocks stay not taken.
TEST(BlockScan, TakenElementsMoveInRunsOfBlocks) {
  const size_t elem = 4;
  for (size_t block : {size_t{1}, size_t{16}, size_t{64}}) {
    const size_t count = 20000;
    std::mt19937 rng(21);
    std::bernoulli_distribution hit(0.08), dense(0.02);
    std::vector<uint8_t> t(count * elem, 0);
    for (size_t i = 0; i < count; ++i)
      if (hit(rng) || dense(rng) || (i / block) % 9 == 4) t[i * elem] = static_cast<uint8_t>(1 + i % 250);
    const BlockLayout layout(count, block);
    std::vector<uint64_t> found;
    std::vector<uint32_t> counts;
    FoundElements taken;
    find_count_and_take_nonzero_blocks(t.data(), elem, layout, {0, layout.num_blocks()}, found, counts, taken);
    // Runs of 1 to 5 found blocks, dealt to two lists in turn.
    FoundElements dealt[2];
    std::vector<size_t> where(found.size());  // the list each block went to
    std::vector<size_t> index(found.size());  // and its index there
    size_t k = 0;
    for (int turn = 0; k < found.size(); turn ^= 1) {
      const size_t end = std::min(found.size(), k + 1 + rng() % 5);
      for (size_t j = k; j < end; ++j) {
        where[j] = static_cast<size_t>(turn);
        index[j] = dealt[turn].first.size() + (j - k);
      }
      dealt[turn].append_blocks(taken, k, end, counts.data(), elem);
      k = end;
    }
    size_t not_taken = 0;
    for (size_t j = 0; j < found.size(); ++j) {
      const FoundElements& d = dealt[where[j]];
      const uint64_t at = d.first[index[j]];
      if (taken.first[j] == FoundElements::kNotTaken) {
        ASSERT_EQ(at, FoundElements::kNotTaken) << "block " << found[j];
        ++not_taken;
        continue;
      }
      ASSERT_NE(at, FoundElements::kNotTaken) << "block " << found[j];
      for (uint32_t e = 0; e < counts[j]; ++e) {
        ASSERT_EQ(d.positions[at + e], taken.positions[taken.first[j] + e]) << "block " << found[j];
        ASSERT_EQ(0, std::memcmp(d.values.data() + (at + e) * elem, taken.values.data() + (taken.first[j] + e) * elem, elem));
      }
    }
    EXPECT_EQ(dealt[0].positions.size() + dealt[1].positions.size(), taken.positions.size());
    if (block > 1) {
      EXPECT_GT(not_taken, 0u) << "block " << block << ": every block was taken";
    }
  }
}

// The vector mask is the element-by-element definition, for every bit
// pattern class: zeros, negative zeros, denormals, sign-only and full words.
TEST(NonzeroMask, VectorMaskMatchesTheDefinition) {
  std::mt19937 rng(3);
  const uint32_t words[] = {0, 0x80000000u, 1, 0x7fffffffu, 0xffffffffu, 0x3f800000u, 0x00008000u, 0x80008000u};
  for (int trial = 0; trial < 2000; ++trial) {
    uint32_t w32[16];
    uint16_t w16[16];
    for (int j = 0; j < 16; ++j) {
      w32[j] = words[rng() % 8];
      w16[j] = static_cast<uint16_t>(words[rng() % 8] >> (rng() % 2 ? 16 : 0));
    }
    const auto* b32 = reinterpret_cast<const uint8_t*>(w32);
    const auto* b16 = reinterpret_cast<const uint8_t*>(w16);
    ASSERT_EQ(nonzero_mask16<uint32_t>(b32), nonzero_mask16_portable<uint32_t>(b32));
    ASSERT_EQ(nonzero_mask16<uint16_t>(b16), nonzero_mask16_portable<uint16_t>(b16));
    std::vector<size_t> seen;
    for_each_nonzero<uint32_t>(b32, 16, [&](size_t i) { seen.push_back(i); });
    ASSERT_EQ(seen.size(), static_cast<size_t>(std::popcount(nonzero_mask16_portable<uint32_t>(b32))));
  }
}

}  // namespace
}  // namespace omnib
