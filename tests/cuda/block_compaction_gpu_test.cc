// The CUDA compaction and scatter kernels against the CPU reference, on the
// same random inputs as block_compaction_test.cc. Skipped without a GPU;
// compiled only in builds with the kernels (omnib_cuda).
#if defined(OMNIB_HAVE_CUDA_KERNELS)

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/block_compaction.cuh"
#include "cuda/device_buffer.h"
#include "engine/blocks/block_compaction.h"
#include "tests/support/block_compaction_inputs.h"

namespace omnib {
namespace {

using gpu::DeviceBuffer;
using gpu::PinnedBuffer;
using test_inputs::kPoison;

#define ASSERT_OK(expr)                                     \
  do {                                                      \
    ::omnib::Status s_ = (expr);                            \
    ASSERT_TRUE(s_.is_ok()) << #expr << ": " << s_.message(); \
  } while (0)

template <typename T>
T take_or_fail(Result<T> r) {
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.take();
}

// A device buffer holding `host` between poisoned guards: `offset_words`
// elements before it (to misalign it on purpose) and one element after.
template <typename W>
DeviceBuffer upload(const std::vector<W>& host, size_t offset_words = 0) {
  const W poison = test_inputs::Bits<W>::kPoison;
  std::vector<W> padded(offset_words, poison);
  padded.insert(padded.end(), host.begin(), host.end());
  padded.push_back(poison);
  DeviceBuffer d = take_or_fail(DeviceBuffer::allocate(padded.size() * sizeof(W)));
  EXPECT_TRUE(gpu::copy_to_device(d.data(), padded.data(), padded.size() * sizeof(W)).is_ok());
  return d;
}

template <typename T>
std::vector<T> download(const void* device, size_t n) {
  std::vector<T> host(n);
  EXPECT_TRUE(gpu::copy_to_host(host.data(), device, n * sizeof(T)).is_ok());
  return host;
}

class GpuCompactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (gpu::cuda_device_count(&reason) == 0) GTEST_SKIP() << "no CUDA device: " << reason;
  }

  // Compacts `t` (elements of type W) on the device (its tensor starting
  // `offset_words` elements into the buffer, to test unaligned tensors) and
  // compares with the CPU reference. Outputs are poisoned and one entry
  // longer than needed.
  template <typename W>
  void expect_compaction(const std::vector<W>& t, const BlockLayout& layout, BlockRange range,
                         size_t offset_words = 0, bool pinned_output = false) {
    const W poison = test_inputs::Bits<W>::kPoison;
    std::vector<uint64_t> want_indices(range.size());
    std::vector<W> want_values(compacted_values_capacity(layout, range));
    Result<uint64_t> want =
        compact_blocks(t.data(), sizeof(W), layout, range, want_indices.data(), want_values.data());
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    const uint64_t n = want.value();
    const uint64_t packed = n ? packed_elements(layout, n, want_indices[n - 1]) : 0;

    DeviceBuffer tensor = upload(t, offset_words);
    const void* tensor_start = tensor.as<W>() + offset_words;
    DeviceBuffer scratch = take_or_fail(DeviceBuffer::allocate(gpu::compact_scratch_bytes(layout, range)));
    const size_t index_slots = range.size() + 1, value_slots = want_values.size() + 1;
    std::vector<uint64_t> got_indices;
    std::vector<W> got_values;
    uint64_t got_n = kPoison;
    if (pinned_output) {
      PinnedBuffer indices = take_or_fail(PinnedBuffer::allocate(index_slots * 8));
      PinnedBuffer values = take_or_fail(PinnedBuffer::allocate(value_slots * sizeof(W)));
      PinnedBuffer count = take_or_fail(PinnedBuffer::allocate(8));
      std::fill_n(indices.as<uint64_t>(), index_slots, kPoison);
      std::fill_n(values.as<W>(), value_slots, poison);
      *count.as<uint64_t>() = kPoison;
      ASSERT_OK(gpu::compact_blocks_async(tensor_start, sizeof(W), layout, range, scratch.data(), scratch.size(),
                                          static_cast<uint64_t*>(indices.device()), values.device(),
                                          static_cast<uint64_t*>(count.device())));
      ASSERT_OK(gpu::synchronize());
      got_indices.assign(indices.as<uint64_t>(), indices.as<uint64_t>() + index_slots);
      got_values.assign(values.as<W>(), values.as<W>() + value_slots);
      got_n = *count.as<uint64_t>();
    } else {
      DeviceBuffer indices = take_or_fail(DeviceBuffer::allocate(index_slots * 8));
      DeviceBuffer values = upload(std::vector<W>(value_slots - 1, poison));
      DeviceBuffer count = take_or_fail(DeviceBuffer::allocate(8));
      ASSERT_OK(gpu::copy_to_device(indices.data(), std::vector<uint64_t>(index_slots, kPoison).data(), index_slots * 8));
      ASSERT_OK(gpu::copy_to_device(count.data(), &got_n, 8));
      ASSERT_OK(gpu::compact_blocks_async(tensor_start, sizeof(W), layout, range, scratch.data(), scratch.size(),
                                          indices.as<uint64_t>(), values.data(), count.as<uint64_t>()));
      ASSERT_OK(gpu::synchronize());
      got_indices = download<uint64_t>(indices.data(), index_slots);
      got_values = download<W>(values.data(), value_slots);
      got_n = download<uint64_t>(count.data(), 1)[0];
    }
    ASSERT_EQ(got_n, n);
    for (uint64_t k = 0; k < index_slots; ++k) {
      ASSERT_EQ(got_indices[k], k < n ? want_indices[k] : kPoison) << "index " << k;
    }
    for (uint64_t e = 0; e < value_slots; ++e) {
      ASSERT_EQ(got_values[e], e < packed ? want_values[e] : poison) << "value element " << e;
    }
  }

  // Scatters a random packed list on the device in both modes, in place over
  // `before` and into a poisoned separate output, against the CPU reference.
  template <typename W>
  void expect_scatter(const std::vector<W>& before, const BlockLayout& layout, BlockRange range, double density,
                      uint64_t seed, size_t offset_words = 0) {
    const W poison = test_inputs::Bits<W>::kPoison;
    test_inputs::Compacted<W> packed = test_inputs::make_packed<W>(layout, range, density, seed);
    const uint64_t n = packed.indices.size();
    DeviceBuffer indices = take_or_fail(DeviceBuffer::allocate(std::max<size_t>(n, 1) * 8));
    ASSERT_OK(gpu::copy_to_device(indices.data(), packed.indices.data(), n * 8));
    DeviceBuffer values = upload(packed.values, offset_words);
    const void* values_start = values.as<W>() + offset_words;
    const std::vector<W> poisoned(before.size(), poison);
    for (ScatterMode mode : {ScatterMode::kListedOnly, ScatterMode::kZeroUnlisted}) {
      for (const std::vector<W>* start : {&before, &poisoned}) {
        if (mode == ScatterMode::kListedOnly && start == &poisoned) continue;  // same as in place
        SCOPED_TRACE(std::string(mode == ScatterMode::kListedOnly ? "listed only" : "zero unlisted") +
                     (start == &poisoned ? ", separate output" : ", in place"));
        std::vector<W> want = *start;
        ASSERT_OK(scatter_blocks(packed.indices.data(), n, packed.values.data(), sizeof(W), layout, range, want.data(),
                                 mode));
        DeviceBuffer out = upload(*start, offset_words);
        ASSERT_OK(gpu::scatter_blocks_async(indices.as<uint64_t>(), n, values_start, sizeof(W), layout, range,
                                            out.as<W>() + offset_words, mode));
        ASSERT_OK(gpu::synchronize());
        std::vector<W> got = download<W>(out.data(), offset_words + before.size() + 1);
        for (size_t i = 0; i < offset_words; ++i) ASSERT_EQ(got[i], poison) << "guard before the tensor";
        ASSERT_EQ(got.back(), poison) << "guard after the tensor";
        for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[offset_words + i], want[i]) << "element " << i;
      }
    }
  }
};

std::vector<BlockRange> ranges_of(const BlockLayout& layout) {
  return {{0, layout.num_blocks()}, layout.shard_range(1, 3), layout.shard_range(2, 3)};
}

// Block size, density, element size (4: float and int32, 2: bf16 and half).
class GpuCompactionSweep : public GpuCompactionTest,
                           public ::testing::WithParamInterface<std::tuple<size_t, double, size_t>> {
 protected:
  template <typename W>
  void compaction_sweep(size_t block_size, double density) {
    uint64_t seed = 7;
    for (size_t count : test_inputs::interesting_counts(block_size)) {
      std::vector<W> t = test_inputs::make_block_sparse<W>(count, block_size, density, seed++);
      BlockLayout layout(count, block_size);
      for (BlockRange r : ranges_of(layout)) {
        SCOPED_TRACE(test_inputs::describe(count, block_size, density, r));
        expect_compaction(t, layout, r);
        if (HasFatalFailure()) return;
      }
    }
  }

  template <typename W>
  void scatter_sweep(size_t block_size, double density) {
    uint64_t seed = 300;
    for (size_t count : test_inputs::interesting_counts(block_size)) {
      std::vector<W> before = test_inputs::make_block_sparse<W>(count, block_size, 0.5, seed++);
      BlockLayout layout(count, block_size);
      for (BlockRange r : ranges_of(layout)) {
        SCOPED_TRACE(test_inputs::describe(count, block_size, density, r));
        expect_scatter(before, layout, r, density, seed++);
        if (HasFatalFailure()) return;
      }
    }
  }
};

TEST_P(GpuCompactionSweep, CompactionMatchesCpu) {
  auto [block_size, density, elem_size] = GetParam();
  if (elem_size == 2)
    compaction_sweep<uint16_t>(block_size, density);
  else
    compaction_sweep<uint32_t>(block_size, density);
}

TEST_P(GpuCompactionSweep, ScatterMatchesCpu) {
  auto [block_size, density, elem_size] = GetParam();
  if (elem_size == 2)
    scatter_sweep<uint16_t>(block_size, density);
  else
    scatter_sweep<uint32_t>(block_size, density);
}

// 1..4096 take the whole-blocks kernel; above 4096 the streaming kernel.
// 16-byte accesses where B is a multiple of 4 (4-byte elements) or 8 (2-byte
// ones): 32, 256, 1024, 4096 and 16384 take them in both, 4100 only with
// 4-byte elements; 1, 7 and 5001 never.
INSTANTIATE_TEST_SUITE_P(BlockSizesAndDensities, GpuCompactionSweep,
                         ::testing::Combine(::testing::Values(1, 7, 32, 256, 1024, 4096, 4100, 5001, 8195, 16384),
                                            ::testing::Values(0.0, 0.01, 0.5, 1.0), ::testing::Values(4, 2)),
                         [](const auto& info) {
                           return "B" + std::to_string(std::get<0>(info.param)) + "_D" +
                                  std::to_string(static_cast<int>(std::get<1>(info.param) * 100)) + "_E" +
                                  std::to_string(std::get<2>(info.param));
                         });

// Many CTAs, so the look-back crosses many tiles and windows of 32.
TEST_F(GpuCompactionTest, LargeTensorsMatchCpu) {
  for (size_t block_size : {1, 32, 256}) {
    for (double density : {0.01, 0.3, 1.0}) {
      size_t count = (size_t{1} << 22) + 5;
      std::vector<uint32_t> t = test_inputs::make_block_sparse(count, block_size, density, block_size);
      BlockLayout layout(count, block_size);
      SCOPED_TRACE(test_inputs::describe(count, block_size, density, {0, layout.num_blocks()}));
      expect_compaction(t, layout, {0, layout.num_blocks()});
      expect_scatter(t, layout, {0, layout.num_blocks()}, density, block_size + 1);
      if (HasFatalFailure()) return;
    }
  }
}

// Tensor and values not 16-byte aligned: the kernels must use single-element accesses.
TEST_F(GpuCompactionTest, UnalignedBuffersMatchCpu) {
  for (size_t block_size : {4, 32, 8192}) {
    size_t count = 200 * block_size + 3;
    BlockLayout layout(count, block_size);
    SCOPED_TRACE("block size " + std::to_string(block_size));
    std::vector<uint32_t> t = test_inputs::make_block_sparse(count, block_size, 0.5, 11);
    expect_compaction(t, layout, {0, layout.num_blocks()}, 1);
    expect_scatter(t, layout, {0, layout.num_blocks()}, 0.5, 12, 3);
    std::vector<uint16_t> halves = test_inputs::make_block_sparse<uint16_t>(count, block_size, 0.5, 13);
    expect_compaction(halves, layout, {0, layout.num_blocks()}, 1);
    expect_scatter(halves, layout, {0, layout.num_blocks()}, 0.5, 14, 4);  // 8-byte aligned: still too little
  }
}

TEST_F(GpuCompactionTest, CompactsIntoMappedPinnedMemory) {
  for (size_t block_size : {32, 16384}) {
    size_t count = 500 * block_size + 17;
    std::vector<uint32_t> t = test_inputs::make_block_sparse(count, block_size, 0.2, 5);
    BlockLayout layout(count, block_size);
    expect_compaction(t, layout, {0, layout.num_blocks()}, 0, true);
  }
}

// Large blocks whose only non-zero word is in a late chunk: the chunks passed
// before it must come out as zeros, written without a second read.
TEST_F(GpuCompactionTest, LargeBlockWithLateFirstNonZero) {
  const size_t block_size = 16384, count = 6 * block_size - 100;
  std::vector<uint32_t> t(count, 0);
  t[0 * block_size + 16383] = 1;             // last word of a full block
  t[1 * block_size + 4096] = 0x80000001u;    // first word of the second chunk
  t[3 * block_size + 12000] = 0x3f800000u;   // third chunk
  t[4 * block_size + 5] = test_inputs::kNegativeZero;  // -0.0 only: a zero block
  t[5 * block_size + 16283] = 2;             // the short last block's last word
  BlockLayout layout(count, block_size);
  expect_compaction(t, layout, {0, layout.num_blocks()});
  expect_compaction(t, layout, {1, 5});
}

TEST_F(GpuCompactionTest, EmptyRangeWritesZeroCount) {
  BlockLayout layout(1000, 32);
  DeviceBuffer count = take_or_fail(DeviceBuffer::allocate(8));
  uint64_t poison = kPoison;
  ASSERT_OK(gpu::copy_to_device(count.data(), &poison, 8));
  ASSERT_OK(gpu::compact_blocks_async(nullptr, 4, layout, {3, 3}, nullptr, 0, nullptr, nullptr, count.as<uint64_t>()));
  ASSERT_OK(gpu::synchronize());
  EXPECT_EQ(download<uint64_t>(count.data(), 1)[0], 0u);
}

TEST_F(GpuCompactionTest, RejectsBadArguments) {
  BlockLayout layout(1000, 32);  // 32 blocks
  DeviceBuffer buf = take_or_fail(DeviceBuffer::allocate(1 << 16));
  auto* p = buf.as<uint64_t>();
  EXPECT_EQ(gpu::compact_blocks_async(p, 4, layout, {0, 33}, p, 1 << 16, p, p, p).code(), Code::kUsage);
  EXPECT_EQ(gpu::compact_blocks_async(p, 4, layout, {0, 32}, p, 1, p, p, p).code(), Code::kUsage);  // small scratch
  EXPECT_EQ(gpu::compact_blocks_async(p, 8, layout, {0, 32}, p, 1 << 16, p, p, p).code(), Code::kUsage);  // 8-byte elements
  EXPECT_EQ(gpu::scatter_blocks_async(p, 33, p, 4, layout, {0, 32}, p, ScatterMode::kListedOnly).code(), Code::kUsage);
  EXPECT_EQ(gpu::scatter_blocks_async(p, 1, p, 4, layout, {0, 33}, p, ScatterMode::kZeroUnlisted).code(), Code::kUsage);
  EXPECT_EQ(gpu::scatter_blocks_async(p, 1, p, 3, layout, {0, 32}, p, ScatterMode::kZeroUnlisted).code(), Code::kUsage);
}

}  // namespace
}  // namespace omnib

#endif  // OMNIB_HAVE_CUDA_KERNELS
