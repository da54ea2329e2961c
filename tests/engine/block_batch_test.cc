#include "engine/omni/block_batch.h"

#include <gtest/gtest.h>

#include <cstring>

#include "engine/transport/frame_format.h"

namespace omnib {
namespace {

// Flattens the iovecs the way a socket would see them.
std::vector<uint8_t> flatten(const std::vector<iovec>& iov) {
  std::vector<uint8_t> out;
  for (const auto& v : iov) {
    auto* p = static_cast<const uint8_t*>(v.iov_base);
    out.insert(out.end(), p, p + v.iov_len);
  }
  return out;
}

// A batch as a sender would put it on the wire: header, indices, then each
// listed block's values read from `tensor`.
std::vector<uint8_t> encode_batch(const BatchHeader& h, const std::vector<uint64_t>& indices, const float* tensor,
                                  const BlockLayout& layout) {
  std::vector<iovec> iov;
  batch_prefix_iovecs(h, indices, iov);
  for (uint64_t b : indices)
    iov.push_back({const_cast<float*>(tensor + layout.block_begin(b)), layout.block_length(b) * sizeof(float)});
  return flatten(iov);
}

TEST(BlockBatch, RoundTripWithAdjacentAndShortBlocks) {
  std::vector<float> t(1000);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(i);
  BlockLayout layout(t.size(), 256);
  std::vector<uint64_t> indices{0, 1, 3};
  BatchHeader h{3, 0, kEndOfStream};
  auto bytes = encode_batch(h, indices, t.data(), layout);
  EXPECT_EQ(bytes.size() + sizeof(wire::FrameHeader), batch_wire_bytes(3, (256 + 256 + 232) * 4));

  BatchView view;
  ASSERT_TRUE(decode_batch(bytes, layout, 4, ShardMap(4, 1, ShardLayout::kContiguous, 1), 0, view).is_ok());
  ASSERT_EQ(view.count, 3u);
  EXPECT_EQ(view.next, kEndOfStream);
  float first_of_block3;
  std::memcpy(&first_of_block3, view.values + view.value_offsets[2], 4);
  EXPECT_EQ(first_of_block3, 768.0f);
}

TEST(BlockBatch, RejectsMalformedBatches) {
  BlockLayout layout(1024, 256);
  std::vector<float> t(1024, 1.0f);
  auto encode = [&](std::vector<uint64_t> idx, uint64_t next) {
    BatchHeader h{static_cast<uint32_t>(idx.size()), 0, next};
    return encode_batch(h, idx, t.data(), layout);
  };
  BatchView view;
  const ShardMap whole(4, 1, ShardLayout::kContiguous, 1);
  const ShardMap halves(4, 2, ShardLayout::kContiguous, 1);  // shard 1 owns blocks 2 and 3
  const ShardMap striped(4, 2, ShardLayout::kStriped, 1);    // shard 1 owns blocks 1 and 3
  EXPECT_FALSE(decode_batch(encode({2, 1}, kEndOfStream), layout, 4, whole, 0, view).is_ok());  // out of order
  EXPECT_FALSE(decode_batch(encode({1}, kEndOfStream), layout, 4, halves, 1, view).is_ok());     // outside shard
  EXPECT_FALSE(decode_batch(encode({1}, 1), layout, 4, whole, 0, view).is_ok());                // look-ahead behind
  auto truncated = encode({1, 2}, kEndOfStream);
  truncated.pop_back();
  EXPECT_FALSE(decode_batch(truncated, layout, 4, whole, 0, view).is_ok());
  EXPECT_FALSE(decode_batch(std::vector<uint8_t>(3), layout, 4, whole, 0, view).is_ok());
  EXPECT_TRUE(decode_batch(encode({}, kEndOfStream), layout, 4, whole, 0, view).is_ok());
  EXPECT_TRUE(decode_batch(encode({1}, 3), layout, 4, striped, 1, view).is_ok());
  EXPECT_FALSE(decode_batch(encode({1}, 2), layout, 4, striped, 1, view).is_ok());             // look-ahead not its block
  EXPECT_FALSE(decode_batch(encode({0}, kEndOfStream), layout, 4, striped, 1, view).is_ok());  // block of shard 0
}

}  // namespace
}  // namespace omnib
