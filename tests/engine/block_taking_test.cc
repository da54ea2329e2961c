// The CPU reference of taking (engine/blocks/block_taking.h): each sparse
// compacted block's elements, as the host scan takes them, in its slot's
// entries; the entries of every other slot untouched.
#include "engine/blocks/block_taking.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/blocks/block_scan.h"
#include "tests/support/block_compaction_inputs.h"
#include "tests/support/segmented_slots.h"

namespace omnib {
namespace {

using test_inputs::Bits;
using test_inputs::segment_on_host;

constexpr uint32_t kPoisonPosition = 0xdeadbeefu;

template <typename W>
void expect_takes_like_the_scan(size_t count, size_t block_size, uint64_t segment_blocks, BlockRange range,
                                bool every_block) {
  const std::vector<W> t = test_inputs::make_element_sparse<W>(count, block_size, count + block_size);
  const BlockLayout layout(count, block_size);
  const auto slots = segment_on_host(t, layout, range, segment_blocks, every_block);
  const uint64_t capacity = taken_slot_capacity(block_size);
  std::vector<uint32_t> positions(range.size() * capacity, kPoisonPosition);
  std::vector<W> values(range.size() * capacity, Bits<W>::kPoison);
  const Status st = take_compacted_elements(t.data(), sizeof(W), layout, range, slots.view(), positions.data(),
                                            values.data());
  ASSERT_TRUE(st.is_ok()) << st.message();

  std::vector<uint64_t> found;
  std::vector<uint32_t> counts;
  FoundElements taken;
  find_count_and_take_nonzero_blocks(t.data(), sizeof(W), layout, range, found, counts, taken);
  size_t next_found = 0;
  for (uint64_t slot = 0; slot < range.size(); ++slot) {
    const uint64_t segment = slot / segment_blocks;
    const bool used = slot % segment_blocks < slots.segment_counts[segment];
    const uint32_t* pos = positions.data() + slot * capacity;
    const W* val = values.data() + slot * capacity;
    bool filled = false;
    if (used && slots.nonzeros[slot] > 0) {
      ASSERT_LT(next_found, found.size());
      ASSERT_EQ(found[next_found], slots.indices[slot]);
      const uint64_t first = taken.first[next_found++];
      if (first != FoundElements::kNotTaken) {
        filled = true;
        const uint32_t n = slots.nonzeros[slot];
        for (uint32_t k = 0; k < n; ++k) {
          ASSERT_EQ(pos[k], taken.positions[first + k]) << "slot " << slot << " element " << k;
          W want;
          std::memcpy(&want, taken.values.data() + (first + k) * sizeof(W), sizeof(W));
          ASSERT_EQ(val[k], want) << "slot " << slot << " element " << k;
        }
        for (uint64_t k = n; k < capacity; ++k) ASSERT_EQ(pos[k], kPoisonPosition) << "slot " << slot;
      }
    }
    if (!filled)
      for (uint64_t k = 0; k < capacity; ++k) {
        ASSERT_EQ(pos[k], kPoisonPosition) << "slot " << slot << " (not taken) entry " << k;
        ASSERT_EQ(val[k], Bits<W>::kPoison) << "slot " << slot << " (not taken) entry " << k;
      }
  }
  EXPECT_EQ(next_found, found.size());
}

class BlockTakingTest : public ::testing::TestWithParam<size_t> {};

TEST_P(BlockTakingTest, TakesWhatTheScanTakes) {
  const size_t block = GetParam();
  for (size_t count : test_inputs::interesting_counts(block)) {
    const BlockLayout layout(count, block);
    for (uint64_t per_segment : {uint64_t{1}, uint64_t{3}, uint64_t{32}}) {
      for (BlockRange range : {BlockRange{0, layout.num_blocks()}, layout.shard_range(1, 3)}) {
        for (bool every_block : {false, true}) {
          SCOPED_TRACE(test_inputs::describe(count, block, 0, range) + " segment " + std::to_string(per_segment) +
                       (every_block ? " every block" : ""));
          expect_takes_like_the_scan<uint32_t>(count, block, per_segment, range, every_block);
          expect_takes_like_the_scan<uint16_t>(count, block, per_segment, range, every_block);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, BlockTakingTest, ::testing::Values(1, 3, 4, 7, 32, 256, 1000, 5000));

TEST(BlockTaking, ACountThatDisagreesWithTheBlockIsAnInternalError) {
  const BlockLayout layout(64, 16);
  std::vector<uint32_t> t(64, 0);
  t[17] = 5;
  auto slots = segment_on_host(t, layout, {0, 4}, 4);
  slots.nonzeros[0] = 2;  // block 1 holds one non-zero
  std::vector<uint32_t> positions(4 * taken_slot_capacity(16));
  std::vector<uint32_t> values(positions.size());
  const Status st = take_compacted_elements(t.data(), 4, layout, {0, 4}, slots.view(), positions.data(), values.data());
  EXPECT_EQ(st.code(), Code::kInternal) << st.message();
}

TEST(BlockTaking, SlotCapacityHoldsEveryBlockTheRuleTakes) {
  for (uint64_t b : {1, 2, 3, 4, 5, 7, 8, 1000, 1001}) {
    EXPECT_TRUE(takes_block(taken_slot_capacity(b), b)) << b;
    EXPECT_FALSE(takes_block(taken_slot_capacity(b) + 1, b)) << b;
  }
}

}  // namespace
}  // namespace omnib
