// ShardMap: owner, run_end, count, next_of and for_each_run must describe one and the
// same partition of the blocks, for both layouts and awkward sizes.
#include "engine/blocks/shard_map.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace omnib {
namespace {

class ShardMapConsistency
    : public ::testing::TestWithParam<std::tuple<ShardLayout, uint64_t /*blocks*/, int /*shards*/, uint64_t /*stripe*/>> {};

TEST_P(ShardMapConsistency, EveryViewAgreesWithOwner) {
  const auto [layout, blocks, shards, stripe] = GetParam();
  const ShardMap map(blocks, shards, layout, stripe);
  std::vector<uint64_t> counted(static_cast<size_t>(shards), 0);
  for (uint64_t b = 0; b < blocks; ++b) {
    const int s = map.owner(b);
    ASSERT_GE(s, 0);
    ASSERT_LT(s, shards);
    ++counted[static_cast<size_t>(s)];
    // run_end: a run of the owner's blocks, at least this one.
    const uint64_t e = map.run_end(b);
    ASSERT_GT(e, b);
    ASSERT_LE(e, blocks);
    for (uint64_t x = b; x < e; ++x) ASSERT_EQ(map.owner(x), s) << "block " << x << " in the run from " << b;
  }
  for (int s = 0; s < shards; ++s) {
    SCOPED_TRACE("shard " + std::to_string(s));
    EXPECT_EQ(map.count(s), counted[static_cast<size_t>(s)]);
    // next_of from every point finds the shard's next block.
    for (uint64_t from = 0; from <= blocks; ++from) {
      uint64_t expect = from;
      while (expect < blocks && map.owner(expect) != s) ++expect;
      ASSERT_EQ(map.next_of(s, from), expect) << "from " << from;
    }
    // Runs inside a window cover exactly the shard's blocks there, in order.
    for (auto [from, to] : {std::pair<uint64_t, uint64_t>{0, blocks}, {blocks / 3, blocks / 2 + 1}, {1, blocks + 5}}) {
      std::vector<uint64_t> seen;
      map.for_each_run(s, from, to, [&](uint64_t b, uint64_t e) {
        ASSERT_LT(b, e);
        for (uint64_t x = b; x < e; ++x) seen.push_back(x);
      });
      std::vector<uint64_t> expect;
      for (uint64_t b = from; b < std::min(to, blocks); ++b)
        if (map.owner(b) == s) expect.push_back(b);
      EXPECT_EQ(seen, expect) << from << ".." << to;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, ShardMapConsistency,
    ::testing::Values(std::tuple{ShardLayout::kContiguous, uint64_t{100}, 4, uint64_t{1}},
                      std::tuple{ShardLayout::kContiguous, uint64_t{3}, 5, uint64_t{1}},
                      std::tuple{ShardLayout::kStriped, uint64_t{100}, 4, uint64_t{4}},
                      std::tuple{ShardLayout::kStriped, uint64_t{101}, 3, uint64_t{7}},
                      std::tuple{ShardLayout::kStriped, uint64_t{5}, 8, uint64_t{2}},
                      std::tuple{ShardLayout::kStriped, uint64_t{64}, 1, uint64_t{16}},
                      std::tuple{ShardLayout::kContiguous, uint64_t{37}, 1, uint64_t{1}},
                      std::tuple{ShardLayout::kContiguous, uint64_t{37}, 2, uint64_t{1}},
                      std::tuple{ShardLayout::kStriped, uint64_t{50}, 2, uint64_t{3}},
                      std::tuple{ShardLayout::kStriped, uint64_t{0}, 3, uint64_t{4}}));

TEST(ShardMap, StripesSpreadAHotPrefixOverEveryShard) {
  // The first tenth of the tensor holds every non-zero (a sorted vocabulary).
  const ShardMap striped(10000, 4, ShardLayout::kStriped, 16);
  const ShardMap contiguous(10000, 4, ShardLayout::kContiguous, 16);
  std::vector<int> per_striped(4, 0), per_contiguous(4, 0);
  for (uint64_t b = 0; b < 1000; ++b) {
    ++per_striped[static_cast<size_t>(striped.owner(b))];
    ++per_contiguous[static_cast<size_t>(contiguous.owner(b))];
  }
  for (int n : per_striped) EXPECT_NEAR(n, 250, 16);
  EXPECT_EQ(per_contiguous[0], 1000);
}

TEST(ShardMap, ASmallTensorUsesOnlyTheShardsItFills) {
  const size_t kib = 1024;  // 256 floats a block
  // 64 KiB: four shards of 16 KiB, however many there are.
  EXPECT_EQ(ShardMap::active_shards(kib, 64, 64), 4);
  EXPECT_EQ(ShardMap::active_shards(kib, 64, 3), 3);
  // Below one shard's worth: still one shard; an empty tensor too.
  EXPECT_EQ(ShardMap::active_shards(kib, 5, 8), 1);
  EXPECT_EQ(ShardMap::active_shards(kib, 0, 8), 1);
  // Large enough for all: every shard.
  EXPECT_EQ(ShardMap::active_shards(kib, 16 * 256, 256), 256);
  EXPECT_EQ(ShardMap::active_shards(kib, 16 * 256 - 1, 256), 255);
}

TEST(ShardMap, LayoutNamesRoundTrip) {
  for (ShardLayout l : {ShardLayout::kContiguous, ShardLayout::kStriped}) {
    ShardLayout parsed{};
    ASSERT_TRUE(parse_shard_layout(shard_layout_name(l), &parsed));
    EXPECT_EQ(parsed, l);
  }
  ShardLayout parsed{};
  EXPECT_FALSE(parse_shard_layout("hashed", &parsed));
}

}  // namespace
}  // namespace omnib
