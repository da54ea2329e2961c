// A stream's packed batches are shared by its destinations: batch k is
// packed once, and its slot is not reused while any destination still sends it.
#include "engine/omni/packed_batches.h"

#include <gtest/gtest.h>

namespace omnib {
namespace {

TEST(PackedBatches, ABatchIsPackedOnceForEveryDestination) {
  PackedBatches packs;
  packs.reset(4);
  PackedBatches::Entry* first = packs.get(0, 0);
  ASSERT_NE(first, nullptr);
  EXPECT_FALSE(first->encoded);
  first->encoding = BlockEncoding::kCoo;
  first->bytes.assign(10, 7);
  first->encoded = true;
  // A second destination reaching batch 0 finds it packed.
  PackedBatches::Entry* again = packs.get(0, 0);
  EXPECT_EQ(again, first);
  EXPECT_TRUE(again->encoded);
  EXPECT_EQ(again->bytes.size(), 10u);
}

TEST(PackedBatches, ASlotWaitsForItsSlowestDestination) {
  PackedBatches packs;
  packs.reset(4);
  for (uint64_t k = 0; k < 4; ++k) {
    PackedBatches::Entry* e = packs.get(k, 0);
    ASSERT_NE(e, nullptr) << k;
    e->encoded = true;
  }
  // Batch 4 would reuse batch 0's slot: not while a destination still sends batch 0.
  EXPECT_EQ(packs.get(4, 0), nullptr);
  // Batch 0 is still there for the slow destination.
  ASSERT_NE(packs.get(0, 0), nullptr);
  EXPECT_TRUE(packs.get(0, 0)->encoded);
  // Once every destination finished batch 0, batch 4 takes its slot, fresh.
  PackedBatches::Entry* e = packs.get(4, 1);
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->encoded);
  EXPECT_TRUE(e->bytes.empty());
  EXPECT_EQ(packs.get(5, 1), nullptr);  // batch 1 is not finished everywhere
}

TEST(PackedBatches, ResetForgetsTheLastCall) {
  PackedBatches packs;
  packs.reset(2);
  packs.get(0, 0)->encoded = true;
  packs.reset(2);
  EXPECT_FALSE(packs.get(0, 0)->encoded);
}

}  // namespace
}  // namespace omnib
