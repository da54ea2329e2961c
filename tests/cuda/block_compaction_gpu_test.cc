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
#include "tests/cuda/gpu_test_buffers.h"
#include "tests/support/block_compaction_inputs.h"

namespace omnib {
namespace {

using gpu::DeviceBuffer;
using gpu::PinnedBuffer;
using gpu_test::download;
using gpu_test::take_or_fail;
using test_inputs::kPoison;

#define ASSERT_OK(expr)                                     \
  do {                                                      \
    ::omnib::Status s_ = (expr);                            \
    ASSERT_TRUE(s_.is_ok()) << #expr << ": " << s_.message(); \
  } while (0)

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

// A device buffer of `n` copies of `value`.
template <typename T>
DeviceBuffer filled(size_t n, T value) {
  return gpu_test::device_copy(std::vector<T>(n, value));
}

constexpr uint32_t kPoison32 = kPoison;

// A segmented compaction as the host reads it back.
template <typename W>
struct Segmented {
  std::vector<uint64_t> indices;
  std::vector<uint32_t> nonzeros;
  std::vector<uint32_t> counts;
  std::vector<W> values;
};

// Elements of block b with a bit set other than the sign bit.
template <typename W>
uint32_t nonzero_elements(const std::vector<W>& t, const BlockLayout& layout, uint64_t b) {
  const W magnitude = static_cast<W>(~(W{1} << (8 * sizeof(W) - 1)));
  uint32_t n = 0;
  for (size_t e = 0; e < layout.block_length(b); ++e) n += (t[layout.block_begin(b) + e] & magnitude) != 0;
  return n;
}

class GpuCompactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (gpu::cuda_device_count(&reason) == 0) GTEST_SKIP() << "no CUDA device: " << reason;
  }

  // Compacts `t` (elements of type W) on the device (its tensor starting
  // `offset_words` elements into the buffer, to test unaligned tensors) and
  // compares with the CPU reference: the used slots of the segments, read in
  // order, are its packed list, each with its count of non-zero elements;
  // unused slots and one entry past every output stay poisoned.
  template <typename W>
  void expect_compaction(const std::vector<W>& t, const BlockLayout& layout, BlockRange range,
                         size_t offset_words = 0, bool pinned_output = false,
                         gpu::CompactionMode mode = gpu::CompactionMode::kNonZeroBlocks) {
    const W poison = test_inputs::Bits<W>::kPoison;
    std::vector<uint64_t> want_indices(range.size());
    std::vector<W> want_values(compacted_values_capacity(layout, range));
    uint64_t n = range.size();
    if (mode == gpu::CompactionMode::kEveryBlock) {  // every block, zero or not: a copy
      for (uint64_t k = 0; k < n; ++k) want_indices[k] = range.begin + k;
      std::copy_n(t.begin() + static_cast<std::ptrdiff_t>(layout.block_begin(range.begin)),
                  layout.elements_in(range), want_values.begin());
    } else {
      Result<uint64_t> want =
          compact_blocks(t.data(), sizeof(W), layout, range, want_indices.data(), want_values.data());
      ASSERT_TRUE(want.is_ok()) << want.status().message();
      n = want.value();
    }

    DeviceBuffer tensor = upload(t, offset_words);
    const void* tensor_start = tensor.as<W>() + offset_words;
    const uint64_t segments = gpu::compaction_segments(layout, sizeof(W), range);
    const size_t slots = range.size() + 1, value_slots = want_values.size() + 1, count_slots = segments + 1;
    Segmented<W> got;
    if (pinned_output) {
      PinnedBuffer indices = take_or_fail(PinnedBuffer::allocate(slots * 8));
      PinnedBuffer nonzeros = take_or_fail(PinnedBuffer::allocate(slots * 4));
      PinnedBuffer counts = take_or_fail(PinnedBuffer::allocate(count_slots * 4));
      PinnedBuffer values = take_or_fail(PinnedBuffer::allocate(value_slots * sizeof(W)));
      std::fill_n(indices.as<uint64_t>(), slots, kPoison);
      std::fill_n(nonzeros.as<uint32_t>(), slots, kPoison32);
      std::fill_n(counts.as<uint32_t>(), count_slots, kPoison32);
      std::fill_n(values.as<W>(), value_slots, poison);
      gpu::CompactionOutputs out{static_cast<uint64_t*>(indices.device()), values.device(),
                                 static_cast<uint32_t*>(nonzeros.device()), static_cast<uint32_t*>(counts.device())};
      ASSERT_OK(gpu::compact_blocks_async(tensor_start, sizeof(W), layout, range, out, nullptr, mode));
      ASSERT_OK(gpu::synchronize());
      got.indices.assign(indices.as<uint64_t>(), indices.as<uint64_t>() + slots);
      got.nonzeros.assign(nonzeros.as<uint32_t>(), nonzeros.as<uint32_t>() + slots);
      got.counts.assign(counts.as<uint32_t>(), counts.as<uint32_t>() + count_slots);
      got.values.assign(values.as<W>(), values.as<W>() + value_slots);
    } else {
      DeviceBuffer indices = filled<uint64_t>(slots, kPoison);
      DeviceBuffer nonzeros = filled<uint32_t>(slots, kPoison32);
      DeviceBuffer counts = filled<uint32_t>(count_slots, kPoison32);
      DeviceBuffer values = filled<W>(value_slots, poison);
      gpu::CompactionOutputs out{indices.as<uint64_t>(), values.data(), nonzeros.as<uint32_t>(),
                                 counts.as<uint32_t>()};
      ASSERT_OK(gpu::compact_blocks_async(tensor_start, sizeof(W), layout, range, out, nullptr, mode));
      ASSERT_OK(gpu::synchronize());
      got.indices = download<uint64_t>(indices.data(), slots);
      got.nonzeros = download<uint32_t>(nonzeros.data(), slots);
      got.counts = download<uint32_t>(counts.data(), count_slots);
      got.values = download<W>(values.data(), value_slots);
    }
    ASSERT_EQ(got.counts[segments], kPoison32) << "segment count past the last segment";
    ASSERT_EQ(got.indices[slots - 1], kPoison) << "index past the last slot";
    ASSERT_EQ(got.values[value_slots - 1], poison) << "value past the capacity";

    // Walk the segments as the engine does and rebuild the packed list.
    const uint64_t per_segment = gpu::compaction_segment_blocks(layout, sizeof(W));
    std::vector<uint64_t> listed;
    std::vector<W> packed;
    for (uint64_t seg = 0; seg < segments; ++seg) {
      const uint64_t blocks_here = std::min(per_segment, range.size() - seg * per_segment);
      ASSERT_LE(got.counts[seg], blocks_here) << "segment " << seg;
      for (uint64_t j = 0; j < blocks_here; ++j) {
        const uint64_t slot = seg * per_segment + j;
        if (j >= got.counts[seg]) {
          ASSERT_EQ(got.indices[slot], kPoison) << "unused slot " << slot;
          ASSERT_EQ(got.nonzeros[slot], kPoison32) << "unused slot " << slot;
          continue;
        }
        const uint64_t b = got.indices[slot];
        ASSERT_TRUE(b >= range.begin + seg * per_segment && b < range.begin + seg * per_segment + blocks_here)
            << "slot " << slot << " holds block " << b << ", outside its segment";
        const size_t len = layout.block_length(b);
        ASSERT_EQ(got.nonzeros[slot], nonzero_elements(t, layout, b)) << "block " << b;
        listed.push_back(b);
        const W* v = got.values.data() + slot * layout.block_size();
        packed.insert(packed.end(), v, v + len);
      }
    }
    ASSERT_EQ(listed.size(), n);
    for (uint64_t k = 0; k < n; ++k) ASSERT_EQ(listed[k], want_indices[k]) << "block " << k << " of the list";
    const uint64_t want_packed = n ? packed_elements(layout, n, want_indices[n - 1]) : 0;
    ASSERT_EQ(packed.size(), want_packed);
    for (uint64_t e = 0; e < want_packed; ++e) ASSERT_EQ(packed[e], want_values[e]) << "value element " << e;
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

// Up to 8192 4-byte or 16384 2-byte elements a block takes the whole-blocks
// kernel (1 with 2-byte elements at the 8192-block cap of a tile); above, the
// streaming kernel (8195 and 16384 with 4-byte elements, 20000 with both).
// 16-byte accesses where B is a multiple of 4 (4-byte elements) or 8 (2-byte
// ones): 32, 256, 1024, 4096, 16384 and 20000 take them in both, 4100 only
// with 4-byte elements; 1, 7 and 5001 never.
INSTANTIATE_TEST_SUITE_P(BlockSizesAndDensities, GpuCompactionSweep,
                         ::testing::Combine(::testing::Values(1, 7, 32, 256, 1024, 4096, 4100, 5001, 8195, 16384, 20000),
                                            ::testing::Values(0.0, 0.01, 0.5, 1.0), ::testing::Values(4, 2)),
                         [](const auto& info) {
                           return "B" + std::to_string(std::get<0>(info.param)) + "_D" +
                                  std::to_string(static_cast<int>(std::get<1>(info.param) * 100)) + "_E" +
                                  std::to_string(std::get<2>(info.param));
                         });

// Many CTAs and segments, and words of 32 blocks in every position.
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

// A dense send lists every block, zero ones too, with their counts: small
// blocks, one block per tile, and streamed large blocks (a zero one included).
TEST_F(GpuCompactionTest, EveryBlockModeListsZeroBlocksWithTheirCounts) {
  for (size_t block_size : {1, 32, 5000, 16384}) {
    const size_t count = 40 * block_size + 3;
    const BlockLayout layout(count, block_size);
    SCOPED_TRACE("block size " + std::to_string(block_size));
    std::vector<uint32_t> t = test_inputs::make_block_sparse(count, block_size, 0.3, 21);
    expect_compaction(t, layout, {0, layout.num_blocks()}, 0, false, gpu::CompactionMode::kEveryBlock);
    expect_compaction(t, layout, {2, layout.num_blocks()}, 0, true, gpu::CompactionMode::kEveryBlock);
    std::vector<uint16_t> halves = test_inputs::make_block_sparse<uint16_t>(count, block_size, 0.3, 22);
    expect_compaction(halves, layout, {0, layout.num_blocks()}, 0, false, gpu::CompactionMode::kEveryBlock);
    if (HasFatalFailure()) return;
  }
}

// Large blocks whose only non-zero word is in a late chunk: the chunks passed
// before it must come out as zeros, written without a second read.
TEST_F(GpuCompactionTest, LargeBlockWithLateFirstNonZero) {
  const size_t chunk = 8192;  // the streaming kernel's chunk of 4-byte elements
  const size_t block_size = 3 * chunk, count = 6 * block_size - 100;
  std::vector<uint32_t> t(count, 0);
  t[0 * block_size + block_size - 1] = 1;                // last word of a full block
  t[1 * block_size + chunk] = 0x80000001u;                // first word of the second chunk
  t[3 * block_size + 2 * chunk + 5] = 0x3f800000u;        // third chunk
  t[4 * block_size + 5] = test_inputs::kNegativeZero;     // -0.0 only: a zero block
  t[5 * block_size + block_size - 101] = 2;               // the short last block's last word
  t[2 * block_size + 7] = test_inputs::kNegativeZero;     // a -0.0 in a chunk passed before the first non-zero
  t[2 * block_size + 2 * chunk] = 3;
  BlockLayout layout(count, block_size);
  expect_compaction(t, layout, {0, layout.num_blocks()});
  expect_compaction(t, layout, {1, 5});
}

TEST_F(GpuCompactionTest, EmptyRangeWritesNothing) {
  BlockLayout layout(1000, 32);
  EXPECT_EQ(gpu::compaction_segments(layout, 4, {3, 3}), 0u);
  ASSERT_OK(gpu::compact_blocks_async(nullptr, 4, layout, {3, 3}, gpu::CompactionOutputs{}));
  ASSERT_OK(gpu::synchronize());
}

TEST_F(GpuCompactionTest, RejectsBadArguments) {
  BlockLayout layout(1000, 32);  // 32 blocks
  DeviceBuffer buf = take_or_fail(DeviceBuffer::allocate(1 << 16));
  auto* p = buf.as<uint64_t>();
  const gpu::CompactionOutputs out{p, p, buf.as<uint32_t>(), buf.as<uint32_t>()};
  EXPECT_EQ(gpu::compact_blocks_async(p, 4, layout, {0, 33}, out).code(), Code::kUsage);
  EXPECT_EQ(gpu::compact_blocks_async(p, 8, layout, {0, 32}, out).code(), Code::kUsage);  // 8-byte elements
  gpu::CompactionOutputs no_counts = out;
  no_counts.segment_counts = nullptr;
  EXPECT_EQ(gpu::compact_blocks_async(p, 4, layout, {0, 32}, no_counts).code(), Code::kUsage);
  EXPECT_EQ(gpu::scatter_blocks_async(p, 33, p, 4, layout, {0, 32}, p, ScatterMode::kListedOnly).code(), Code::kUsage);
  EXPECT_EQ(gpu::scatter_blocks_async(p, 1, p, 4, layout, {0, 33}, p, ScatterMode::kZeroUnlisted).code(), Code::kUsage);
  EXPECT_EQ(gpu::scatter_blocks_async(p, 1, p, 3, layout, {0, 32}, p, ScatterMode::kZeroUnlisted).code(), Code::kUsage);
}

// Blocks above 2^31 elements are refused before anything reaches the GPU
// (so this runs without one): 32-bit chunk and tile arithmetic would wrap.
TEST(GpuCompactionLimits, BlocksAbove2To31AreAUsageErrorNamingTheLimit) {
  const uint64_t too_big = kMaxGpuBlockSize + 1;
  BlockLayout layout(too_big, too_big);
  const Status compact = gpu::compact_blocks_async(nullptr, 4, layout, {0, 1}, gpu::CompactionOutputs{});
  EXPECT_EQ(compact.code(), Code::kUsage);
  EXPECT_NE(compact.message().find("2^31"), std::string::npos) << compact.message();
  const Status scatter =
      gpu::scatter_blocks_async(nullptr, 0, nullptr, 4, layout, {0, 1}, nullptr, ScatterMode::kZeroUnlisted);
  EXPECT_EQ(scatter.code(), Code::kUsage);
  EXPECT_NE(scatter.message().find("2^31"), std::string::npos) << scatter.message();
  EXPECT_TRUE(gpu::check_gpu_block_size(BlockLayout(kMaxGpuBlockSize, kMaxGpuBlockSize)).is_ok());
}

}  // namespace
}  // namespace omnib

#endif  // OMNIB_HAVE_CUDA_KERNELS
