// The CUDA taking kernel against its CPU reference (engine/blocks/block_taking.h),
// after a compaction on the device, into device memory and into mapped
// pinned memory. Skipped without a GPU; compiled only with the kernels.
#if defined(OMNIB_HAVE_CUDA_KERNELS)

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/block_taking.cuh"
#include "cuda/device_buffer.h"
#include "engine/blocks/block_taking.h"
#include "tests/cuda/gpu_test_buffers.h"
#include "tests/support/block_compaction_inputs.h"

namespace omnib {
namespace {

using gpu::DeviceBuffer;
using gpu::PinnedBuffer;
using gpu_test::device_copy;
using gpu_test::take_or_fail;
using test_inputs::Bits;

constexpr uint32_t kPoisonPosition = 0xdeadbeefu;

class GpuTakingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (gpu::cuda_device_count(&reason) == 0) GTEST_SKIP() << "no CUDA device: " << reason;
  }

  // Compacts `t` on the device, takes on the device, and compares every
  // entry (poison where nothing is taken, and one entry past the end) with
  // the CPU reference run on the device's own compaction.
  template <typename W>
  void expect_taking(const std::vector<W>& t, const BlockLayout& layout, BlockRange range, bool pinned) {
    const uint64_t slots = range.size();
    const uint64_t segments = gpu::compaction_segments(layout, sizeof(W), range);
    const uint64_t entries = slots * taken_slot_capacity(layout.block_size()) + 1;
    DeviceBuffer tensor = device_copy(t);
    DeviceBuffer indices = take_or_fail(DeviceBuffer::allocate(std::max<uint64_t>(1, slots) * 8));
    DeviceBuffer nonzeros = take_or_fail(DeviceBuffer::allocate(std::max<uint64_t>(1, slots) * 4));
    DeviceBuffer counts = take_or_fail(DeviceBuffer::allocate(std::max<uint64_t>(1, segments) * 4));
    DeviceBuffer values =
        take_or_fail(DeviceBuffer::allocate(std::max<uint64_t>(1, compacted_values_capacity(layout, range)) * sizeof(W)));
    const gpu::CompactionOutputs compacted{indices.as<uint64_t>(), values.data(), nonzeros.as<uint32_t>(),
                                           counts.as<uint32_t>()};
    ASSERT_TRUE(gpu::compact_blocks_async(tensor.data(), sizeof(W), layout, range, compacted).is_ok());

    const std::vector<uint32_t> poison_positions(entries, kPoisonPosition);
    const std::vector<W> poison_values(entries, Bits<W>::kPoison);
    std::vector<uint32_t> got_positions;
    std::vector<W> got_values;
    if (pinned) {
      PinnedBuffer positions = take_or_fail(PinnedBuffer::allocate(entries * 4));
      PinnedBuffer taken = take_or_fail(PinnedBuffer::allocate(entries * sizeof(W)));
      std::copy(poison_positions.begin(), poison_positions.end(), positions.as<uint32_t>());
      std::copy(poison_values.begin(), poison_values.end(), taken.as<W>());
      const gpu::TakenOutputs out{static_cast<uint32_t*>(positions.device()), taken.device()};
      ASSERT_TRUE(gpu::take_block_elements_async(tensor.data(), sizeof(W), layout, range, compacted, out).is_ok());
      ASSERT_TRUE(gpu::synchronize().is_ok());
      got_positions.assign(positions.as<uint32_t>(), positions.as<uint32_t>() + entries);
      got_values.assign(taken.as<W>(), taken.as<W>() + entries);
    } else {
      DeviceBuffer positions = device_copy(poison_positions);
      DeviceBuffer taken = device_copy(poison_values);
      const gpu::TakenOutputs out{positions.as<uint32_t>(), taken.data()};
      ASSERT_TRUE(gpu::take_block_elements_async(tensor.data(), sizeof(W), layout, range, compacted, out).is_ok());
      ASSERT_TRUE(gpu::synchronize().is_ok());
      got_positions = gpu_test::download<uint32_t>(positions.data(), entries);
      got_values = gpu_test::download<W>(taken.data(), entries);
    }

    const auto slot_indices = gpu_test::download<uint64_t>(indices.data(), slots);
    const auto slot_nonzeros = gpu_test::download<uint32_t>(nonzeros.data(), slots);
    const auto segment_counts = gpu_test::download<uint32_t>(counts.data(), segments);
    const CompactedSlots view{slot_indices.data(), slot_nonzeros.data(), segment_counts.data(),
                              gpu::compaction_segment_blocks(layout, sizeof(W))};
    std::vector<uint32_t> want_positions = poison_positions;
    std::vector<W> want_values = poison_values;
    const Status st = take_compacted_elements(t.data(), sizeof(W), layout, range, view, want_positions.data(),
                                              want_values.data());
    ASSERT_TRUE(st.is_ok()) << st.message();
    for (uint64_t e = 0; e < entries; ++e) {
      ASSERT_EQ(got_positions[e], want_positions[e]) << "position entry " << e;
      ASSERT_EQ(got_values[e], want_values[e]) << "value entry " << e;
    }
  }

  template <typename W>
  void sweep(size_t block_size) {
    uint64_t seed = 1;
    for (size_t count : test_inputs::interesting_counts(block_size)) {
      const std::vector<W> t = test_inputs::make_element_sparse<W>(count, block_size, seed++);
      const BlockLayout layout(count, block_size);
      for (BlockRange r : {BlockRange{0, layout.num_blocks()}, layout.shard_range(1, 3)}) {
        for (bool pinned : {false, true}) {
          SCOPED_TRACE(test_inputs::describe(count, block_size, 0, r) + (pinned ? " pinned" : " device"));
          expect_taking(t, layout, r, pinned);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
};

// Block sizes either side of the tile (8192 4-byte elements, 16384 2-byte
// ones), where the compaction changes strategy, and past a warp's round.
TEST_F(GpuTakingTest, MatchesTheCpuReference) {
  for (size_t block_size : {1, 3, 7, 32, 256, 300, 1024, 5000, 8195, 16384, 20000}) {
    SCOPED_TRACE("block size " + std::to_string(block_size));
    sweep<uint32_t>(block_size);
    sweep<uint16_t>(block_size);
    if (HasFatalFailure()) return;
  }
}

TEST_F(GpuTakingTest, RejectsBadArguments) {
  const BlockLayout layout(1000, 32);
  DeviceBuffer buf = take_or_fail(DeviceBuffer::allocate(1 << 16));
  const gpu::CompactionOutputs compacted{buf.as<uint64_t>(), buf.data(), buf.as<uint32_t>(), buf.as<uint32_t>()};
  const gpu::TakenOutputs out{buf.as<uint32_t>(), buf.data()};
  EXPECT_EQ(gpu::take_block_elements_async(buf.data(), 4, layout, {0, 33}, compacted, out).code(), Code::kUsage);
  EXPECT_EQ(gpu::take_block_elements_async(buf.data(), 8, layout, {0, 32}, compacted, out).code(), Code::kUsage);
  EXPECT_EQ(gpu::take_block_elements_async(buf.data(), 4, layout, {0, 32}, compacted, gpu::TakenOutputs{}).code(),
            Code::kUsage);
  EXPECT_TRUE(gpu::take_block_elements_async(nullptr, 4, layout, {3, 3}, compacted, out).is_ok());  // empty range
}

}  // namespace
}  // namespace omnib

#endif  // OMNIB_HAVE_CUDA_KERNELS
