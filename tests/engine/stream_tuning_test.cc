// How the omni engine cuts a worker's stream into batches (BatchCut): the
// first batches leave after one scan piece, later ones span widening groups
// of pieces, and no batch exceeds its block budget.
#include "engine/omni/stream_tuning.h"

#include <gtest/gtest.h>

#include <vector>

namespace omnib {
namespace {

TEST(StreamTuning, TheDirectRouteKeepsBothBudgetsOrAtLeast256KiB) {
  // 4 ms of a 1 Gbit/s link (500 kB) is above the floor: as the shards route.
  EXPECT_EQ(direct_receive_budget_bytes(1'000'000'000), receive_budget_bytes(1'000'000'000));
  EXPECT_EQ(receive_budget_bytes(100'000'000), 50'000u);
  EXPECT_EQ(direct_receive_budget_bytes(100'000'000), 256u << 10);
  EXPECT_EQ(direct_receive_budget_bytes(0), receive_budget_bytes(0));  // rate unknown
  // A batch is half a sender's share of the budget.
  const StreamTuning t = tune_streams(100'000'000, 4, 4 << 20, direct_receive_budget_bytes(100'000'000));
  EXPECT_EQ(t.frame_bytes, (256u << 10) / 4 / 2);
  EXPECT_EQ(t.inflight_bytes, (256u << 10) / 4);
  EXPECT_EQ(tune_streams(0, 4, 4 << 20, receive_budget_bytes(0)).inflight_bytes, 0u);  // the transport's default
}

TEST(BatchCut, GroupsWidenFromOnePieceToTheCap) {
  std::vector<uint64_t> starts;
  for (uint64_t p = 0; p < 40; ++p) starts.push_back(BatchCut::group_of_piece(p));
  const std::vector<uint64_t> expected = {0,  1,  2,  2,  4,  4,  4,  4,  8,  8,  8,  8,  8,  8,
                                          8,  8,  16, 16, 16, 16, 16, 16, 16, 16, 24, 24, 24, 24,
                                          24, 24, 24, 24, 32, 32, 32, 32, 32, 32, 32, 32};
  EXPECT_EQ(starts, expected);
}

TEST(BatchCut, CountsTheGroupsOfATensor) {
  EXPECT_EQ(BatchCut::groups_in(0), 0u);
  EXPECT_EQ(BatchCut::groups_in(1), 1u);
  EXPECT_EQ(BatchCut::groups_in(3), 3u);   // 0 | 1 | 2-3
  EXPECT_EQ(BatchCut::groups_in(4), 3u);
  EXPECT_EQ(BatchCut::groups_in(5), 4u);   // ... | 4-7 (open)
  EXPECT_EQ(BatchCut::groups_in(64), 11u); // 0 | 1 | 2-3 | 4-7 | 8-15 | 16-23 | ... | 56-63
  for (uint64_t pieces = 1; pieces < 300; ++pieces) {
    uint64_t boundaries = 1;
    for (uint64_t p = 1; p < pieces; ++p)
      boundaries += BatchCut::group_of_piece(p) != BatchCut::group_of_piece(p - 1);
    EXPECT_EQ(BatchCut::groups_in(pieces), boundaries) << pieces << " pieces";
  }
}

// group_end is where the next group starts: blocks below it share the
// block's group, the block at it does not (what the stream cutter relies on).
TEST(BatchCut, GroupEndIsTheNextGroupsFirstBlock) {
  const BatchCut cut = BatchCut::for_blocks(1024, 64 << 10, EncodingPolicy::kBlocks);
  for (uint64_t block = 0; block < 40 * cut.piece_blocks; block += 97) {
    const uint64_t end = cut.group_end(block);
    ASSERT_GT(end, block);
    EXPECT_EQ(cut.group_of(end - 1), cut.group_of(block)) << "block " << block;
    EXPECT_NE(cut.group_of(end), cut.group_of(block)) << "block " << block;
  }
}

TEST(BatchCut, ABatchEndsAtAGroupOrItsBudget) {
  const BatchCut cut = BatchCut::for_blocks(1024, 64 << 10, EncodingPolicy::kBlocks);  // 1 KiB blocks, 64 KiB frames
  ASSERT_EQ(cut.piece_blocks, 1024u);
  ASSERT_EQ(cut.per_batch, 64u);
  auto held = [](size_t blocks) { return blocks * 1024; };  // whole blocks weigh their values
  EXPECT_TRUE(cut.starts_new(10, 1024 + 3, held(1)));             // piece 0 | piece 1
  EXPECT_FALSE(cut.starts_new(2 * 1024, 3 * 1024 + 5, held(1)));  // pieces 2 and 3: one group
  EXPECT_TRUE(cut.starts_new(3 * 1024, 4 * 1024, held(1)));       // 2-3 | 4-7
  EXPECT_FALSE(cut.starts_new(16 * 1024, 23 * 1024, held(63)));  // 16-23, under budget
  EXPECT_TRUE(cut.starts_new(16 * 1024, 17 * 1024, held(64)));   // the budget is full
}

TEST(BatchCut, LightSparseBatchesRunOnAcrossGroups) {
  const BatchCut cut = BatchCut::for_blocks(1024, 64 << 10, EncodingPolicy::kAuto);
  // A few hundred bytes of top-k values: the batch runs on past its group...
  EXPECT_FALSE(cut.starts_new(3 * 1024, 4 * 1024, 300));
  // ...until it weighs a quarter of a full batch.
  EXPECT_TRUE(cut.starts_new(3 * 1024, 4 * 1024, 16 << 10));
}

}  // namespace
}  // namespace omnib
