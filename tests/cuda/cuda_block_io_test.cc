// The device WorkerBlockIo (--device cuda) held to the host one's contract:
// the same staged blocks and bytes, and the same output in and out of place.
// Skipped without a GPU; compiled only in builds with the kernels.
#if defined(OMNIB_HAVE_CUDA_KERNELS)

#include <gtest/gtest.h>

#include "engine/omni/cuda_block_io.h"
#include "cuda/device_buffer.h"
#include "tests/support/block_compaction_inputs.h"
#include "tests/support/block_io_contract.h"

namespace omnib {
namespace {

using test_inputs::kPoison;
using test_inputs::make_block_sparse;

struct DeviceTensor {
  gpu::DeviceBuffer buffer;
  TensorView view;
};

DeviceTensor to_device(const std::vector<uint32_t>& host) {
  auto buffer = gpu::DeviceBuffer::allocate(host.size() * 4);
  EXPECT_TRUE(buffer.is_ok()) << buffer.status().message();
  DeviceTensor t{buffer.take(), {}};
  EXPECT_TRUE(gpu::copy_to_device(t.buffer.data(), host.data(), host.size() * 4).is_ok());
  t.view = TensorView{t.buffer.data(), host.size(), DType::kFloat32, DeviceKind::kCuda};
  return t;
}

std::vector<uint32_t> to_host(const DeviceTensor& t) {
  std::vector<uint32_t> host(t.view.count);
  EXPECT_TRUE(gpu::copy_to_host(host.data(), t.buffer.data(), host.size() * 4).is_ok());
  return host;
}

std::unique_ptr<WorkerBlockIo> make_io(int shards) {
  auto io = gpu::CudaBlockIo::create(shards);
  EXPECT_TRUE(io.is_ok()) << io.status().message();
  return io.is_ok() ? io.take() : nullptr;
}

class CudaBlockIoTest : public ::testing::TestWithParam<std::tuple<size_t, double, int, bool>> {
 protected:
  void SetUp() override {
    std::string reason;
    if (gpu::cuda_device_count(&reason) == 0) GTEST_SKIP() << "no CUDA device: " << reason;
  }
};

TEST_P(CudaBlockIoTest, StagesWhatTheHostWouldSend) {
  const auto [block_size, density, shards, striped] = GetParam();
  const size_t count = 100003;
  std::vector<uint32_t> host = make_block_sparse(count, block_size, density, 42);
  DeviceTensor in = to_device(host);
  DeviceTensor out = to_device(std::vector<uint32_t>(count, kPoison));
  const BlockLayout layout(count, block_size);
  auto io = make_io(shards);
  ASSERT_NE(io, nullptr);
  const ShardMap map = test_block_io::test_map(layout, shards, striped);
  ASSERT_TRUE(io->begin(in.view, out.view, layout, map).is_ok());
  test_block_io::expect_stages_like_reference(*io, host, layout, map, {1, 7, 100000});
}

// The taking kernel's elements reach the host as the host scan takes them.
TEST_P(CudaBlockIoTest, TakesWhatTheHostScanTakes) {
  const auto [block_size, density, shards, striped] = GetParam();
  const size_t count = 100003;
  std::vector<uint32_t> host = density == 0.0 ? std::vector<uint32_t>(count, 0)
                                              : test_inputs::make_element_sparse(count, block_size, 43);
  DeviceTensor in = to_device(host);
  DeviceTensor out = to_device(std::vector<uint32_t>(count, kPoison));
  const BlockLayout layout(count, block_size);
  auto io = make_io(shards);
  ASSERT_NE(io, nullptr);
  ASSERT_TRUE(io->begin(in.view, out.view, layout, test_block_io::test_map(layout, shards, striped)).is_ok());
  test_block_io::expect_takes_like_reference(*io, host, layout);
}

TEST_P(CudaBlockIoTest, ReceiveMatchesTheHostContract) {
  const auto [block_size, density, shards, striped] = GetParam();
  const size_t count = 100003;
  const BlockLayout layout(count, block_size);
  const ShardMap map = test_block_io::test_map(layout, shards, striped);
  std::vector<uint32_t> input = make_block_sparse(count, block_size, density, 7);
  // Zeros inside the blocks, which the sparse encodings below leave out.
  std::vector<uint32_t> result = test_block_io::holey_result(count, block_size, 8);
  for (bool in_place : {false, true}) {
    // In place, the listed blocks cover the input's non-zero ones, as in the engine.
    std::vector<uint64_t> listed =
        nonzero_blocks(in_place ? input.data() : make_block_sparse(count, block_size, density, 9).data(), 4, layout);
    DeviceTensor in = to_device(input);
    DeviceTensor out = to_device(std::vector<uint32_t>(count, kPoison));
    const TensorView& target = in_place ? in.view : out.view;
    auto io = make_io(shards);
    ASSERT_NE(io, nullptr);
    ASSERT_TRUE(io->begin(in.view, target, layout, map).is_ok());
    ASSERT_TRUE(io->begin_receive().is_ok());
    for (int s = 0; s < shards; ++s) {
      auto mine = test_block_io::blocks_of_shard(listed, map, s);
      Status st = test_block_io::deliver(*io, s, layout, map, mine, result, 3, in_place ? EncodingPolicy::kBitmap : EncodingPolicy::kCoo);
      ASSERT_TRUE(st.is_ok()) << st.message();
    }
    EXPECT_EQ(to_host(in_place ? in : out), test_block_io::expected_output(result, input, layout, listed, in_place))
        << (in_place ? "in place" : "out of place");
  }
}

INSTANTIATE_TEST_SUITE_P(BlockSizesDensitiesShards, CudaBlockIoTest,
                         ::testing::Combine(::testing::Values(size_t{1}, size_t{32}, size_t{256}, size_t{5000}),
                                            ::testing::Values(0.0, 0.01, 0.3, 1.0), ::testing::Values(1, 4),
                                            ::testing::Bool()));

}  // namespace
}  // namespace omnib

#endif  // OMNIB_HAVE_CUDA_KERNELS
