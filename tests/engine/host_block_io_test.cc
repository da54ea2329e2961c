// The host WorkerBlockIo: the blocks it finds and sends, and the output its
// receive half leaves, in and out of place, for both shard layouts.
#include "engine/omni/host_block_io.h"

#include <gtest/gtest.h>

#include "tests/support/block_compaction_inputs.h"
#include "tests/support/block_io_contract.h"

namespace omnib {
namespace {

using test_block_io::holey_result;
using test_block_io::test_map;
using test_inputs::kPoison;
using test_inputs::make_block_sparse;

TensorView host_view(std::vector<uint32_t>& t) { return TensorView{t.data(), t.size(), DType::kFloat32}; }

class HostBlockIoTest : public ::testing::TestWithParam<std::tuple<size_t, double, int, bool>> {};

TEST_P(HostBlockIoTest, FindsTheNonZeroBlocksOfEveryShard) {
  const auto [block_size, density, shards, striped] = GetParam();
  const size_t count = 10007;  // not a multiple of any block size: a short last block
  std::vector<uint32_t> in = make_block_sparse(count, block_size, density, 42);
  std::vector<uint32_t> out(count, kPoison);
  const BlockLayout layout(count, block_size);
  const ShardMap map = test_map(layout, shards, striped);
  HostBlockIo io(shards);
  ASSERT_TRUE(io.begin(host_view(in), host_view(out), layout, map).is_ok());
  test_block_io::expect_stages_like_reference(io, in, layout, map, {1, 3, 1000});
}

TEST_P(HostBlockIoTest, TakesTheElementsOfSparseBlocks) {
  const auto [block_size, density, shards, striped] = GetParam();
  const size_t count = 10007;
  std::vector<uint32_t> in = density == 0.0 ? std::vector<uint32_t>(count, 0)
                                            : test_inputs::make_element_sparse(count, block_size, 42);
  std::vector<uint32_t> out(count, kPoison);
  const BlockLayout layout(count, block_size);
  HostBlockIo io(shards);
  ASSERT_TRUE(io.begin(host_view(in), host_view(out), layout, test_map(layout, shards, striped)).is_ok());
  test_block_io::expect_takes_like_reference(io, in, layout);
}

const EncodingPolicy kPolicies[] = {EncodingPolicy::kBlocks, EncodingPolicy::kBitmap, EncodingPolicy::kCoo,
                                    EncodingPolicy::kAuto};

TEST_P(HostBlockIoTest, ReceiveWritesListedBlocksAndZeroesTheRestOutOfPlace) {
  const auto [block_size, density, shards, striped] = GetParam();
  const size_t count = 10007;
  std::vector<uint32_t> in = make_block_sparse(count, block_size, density, 7);
  std::vector<uint32_t> result = holey_result(count, block_size, 8);
  const BlockLayout layout(count, block_size);
  const ShardMap map = test_map(layout, shards, striped);
  // The listed blocks: a random subset, as the shards' reduced streams would be.
  std::vector<uint64_t> listed = nonzero_blocks(make_block_sparse(count, block_size, density, 9).data(), 4, layout);
  for (EncodingPolicy policy : kPolicies) {
    for (size_t per_batch : {size_t{1}, size_t{4}, size_t{100000}}) {
      std::vector<uint32_t> out(count, kPoison);
      HostBlockIo io(shards);
      ASSERT_TRUE(io.begin(host_view(in), host_view(out), layout, map).is_ok());
      ASSERT_TRUE(io.begin_receive().is_ok());
      for (int s = 0; s < shards; ++s) {
        auto mine = test_block_io::blocks_of_shard(listed, map, s);
        Status st = test_block_io::deliver(io, s, layout, map, mine, result, per_batch, policy);
        ASSERT_TRUE(st.is_ok()) << st.message();
      }
      EXPECT_EQ(out, test_block_io::expected_output(result, in, layout, listed, false))
          << "batch " << per_batch << " encoding " << encoding_policy_name(policy);
    }
  }
}

TEST_P(HostBlockIoTest, ReceiveInPlaceLeavesUnlistedBlocksAlone) {
  const auto [block_size, density, shards, striped] = GetParam();
  const size_t count = 10007;
  std::vector<uint32_t> in = make_block_sparse(count, block_size, density, 11);
  const std::vector<uint32_t> original = in;
  std::vector<uint32_t> result = holey_result(count, block_size, 12);
  const BlockLayout layout(count, block_size);
  const ShardMap map = test_map(layout, shards, striped);
  std::vector<uint64_t> listed = nonzero_blocks(in.data(), 4, layout);
  for (EncodingPolicy policy : kPolicies) {
    in = original;
    HostBlockIo io(shards);
    ASSERT_TRUE(io.begin(host_view(in), host_view(in), layout, map).is_ok());
    ASSERT_TRUE(io.begin_receive().is_ok());
    for (int s = 0; s < shards; ++s) {
      auto mine = test_block_io::blocks_of_shard(listed, map, s);
      ASSERT_TRUE(test_block_io::deliver(io, s, layout, map, mine, result, 5, policy).is_ok());
    }
    EXPECT_EQ(in, test_block_io::expected_output(result, original, layout, listed, true))
        << encoding_policy_name(policy);
  }
}

INSTANTIATE_TEST_SUITE_P(BlockSizesDensitiesShards, HostBlockIoTest,
                         ::testing::Combine(::testing::Values(size_t{1}, size_t{32}, size_t{256}, size_t{4096}),
                                            ::testing::Values(0.0, 0.05, 0.5, 1.0), ::testing::Values(1, 3),
                                            ::testing::Bool()));

TEST(HostBlockIo, RejectsAResultStreamThatGoesBack) {
  std::vector<uint32_t> in(1024, 0), out(1024, kPoison), result(1024, 1);
  const BlockLayout layout(1024, 256);
  HostBlockIo io(1);
  ASSERT_TRUE(io.begin(host_view(in), host_view(out), layout, test_map(layout, 1, false)).is_ok());
  ASSERT_TRUE(io.begin_receive().is_ok());
  uint64_t second[] = {2}, first[] = {1};
  BatchView view;
  view.count = 1;
  view.value_offsets = {0};
  view.values = reinterpret_cast<const uint8_t*>(result.data());
  view.indices = second;
  ASSERT_TRUE(io.store(0, view).is_ok());
  view.indices = first;
  Status st = io.store(0, view);
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("went back"), std::string::npos) << st.message();
}

// Sums written straight into the output (the direct route): stored_in_place
// zeroes the blocks between them out of place, finish_receive the rest,
// and the output is what store() would have left; a stream that goes back
// is refused.
TEST(HostBlockIo, SumsWrittenInPlaceGetTheirGapsZeroed) {
  const size_t count = 10007, block = 32;
  const BlockLayout layout(count, block);
  const ShardMap map = test_map(layout, 1, false);
  std::vector<uint32_t> in = make_block_sparse(count, block, 0.3, 21);
  const std::vector<uint32_t> result = holey_result(count, block, 22);
  const std::vector<uint64_t> listed = nonzero_blocks(in.data(), 4, layout);
  std::vector<uint32_t> out(count, kPoison);
  HostBlockIo io(1);
  ASSERT_TRUE(io.begin(host_view(in), host_view(out), layout, map).is_ok());
  ASSERT_TRUE(io.begin_receive().is_ok());
  ASSERT_EQ(io.host_output(), reinterpret_cast<uint8_t*>(out.data()));
  for (size_t at = 0; at < listed.size(); at += 7) {
    const std::span<const uint64_t> batch(listed.data() + at, std::min<size_t>(7, listed.size() - at));
    for (uint64_t b : batch)
      std::copy_n(result.begin() + static_cast<long>(layout.block_begin(b)), layout.block_length(b),
                  out.begin() + static_cast<long>(layout.block_begin(b)));
    ASSERT_TRUE(io.stored_in_place(0, batch).is_ok());
  }
  ASSERT_TRUE(io.finish_receive(0).is_ok());
  EXPECT_EQ(out, test_block_io::expected_output(result, in, layout, listed, false));
  ASSERT_TRUE(io.begin_receive().is_ok());
  const uint64_t second[] = {2}, first[] = {1};
  ASSERT_TRUE(io.stored_in_place(0, second).is_ok());
  EXPECT_FALSE(io.stored_in_place(0, first).is_ok());
}

// A range written whole (zeros included) by the aggregator: the gap before
// it is zeroed, the range itself left as written, and the stream may not
// go back into it.
TEST(HostBlockIo, ARangeWrittenWholeIsLeftAsWritten) {
  const BlockLayout layout(64, 4);  // 16 blocks
  const ShardMap map = test_map(layout, 1, false);
  std::vector<uint32_t> in(64, 1), out(64, kPoison);
  HostBlockIo io(1);
  ASSERT_TRUE(io.begin(host_view(in), host_view(out), layout, map).is_ok());
  ASSERT_TRUE(io.begin_receive().is_ok());
  for (size_t i = 12; i < 40; ++i) out[i] = 7;  // blocks 3..9, as the range wrote them
  ASSERT_TRUE(io.stored_range_in_place(0, 3, 10).is_ok());
  EXPECT_FALSE(io.stored_range_in_place(0, 9, 12).is_ok());
  const uint64_t back[] = {5};
  EXPECT_FALSE(io.stored_in_place(0, back).is_ok());
  ASSERT_TRUE(io.finish_receive(0).is_ok());
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], i >= 12 && i < 40 ? 7u : 0u) << i;
}

TEST(HostBlockIo, RefusesDeviceTensors) {
  std::vector<uint32_t> t(16);
  TensorView device{t.data(), t.size(), DType::kFloat32, DeviceKind::kCuda};
  HostBlockIo io(1);
  const BlockLayout layout(16, 4);
  EXPECT_FALSE(io.begin(device, device, layout, test_map(layout, 1, false)).is_ok());
}

}  // namespace
}  // namespace omnib
