#include "baselines/sparse_stream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "engine/transport/local_connection.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;

struct LocalPair {
  std::unique_ptr<LocalConnection> a, b;
  LocalPair() { std::tie(a, b) = LocalConnection::make_pair(0, milliseconds(2000), 4096); }
};

Frame frame_of(uint32_t tag, uint64_t seq, ChunkHeader h, const std::vector<uint32_t>& body) {
  Frame f;
  f.header.type = static_cast<uint16_t>(wire::FrameType::kSparse);
  f.header.tag = tag;
  f.header.seq = seq;
  f.payload.resize(sizeof(h) + body.size() * 4);
  std::memcpy(f.payload.data(), &h, sizeof(h));
  if (!body.empty()) std::memcpy(f.payload.data() + sizeof(h), body.data(), body.size() * 4);
  f.header.length = f.payload.size();
  return f;
}

TEST(SparseStream, SparseRoundTripAcrossManyFrames) {
  LocalPair p;
  SparseVector v;
  v.reset(0, 1u << 24, false);
  for (uint32_t i = 0; i < 100000; ++i) {
    v.indices.push_back(i * 7 + 3);
    v.values.push_back(i + 1);
  }
  ASSERT_TRUE(send_vector(*p.a, 5, 9, v.view()).is_ok());
  SparseVector got;
  ASSERT_TRUE(receive_vector(*p.b, 5, 9, 0, 1u << 24, "test", got).is_ok());
  EXPECT_FALSE(got.dense);
  EXPECT_EQ(got.indices, v.indices);
  EXPECT_EQ(got.values, v.values);
}

TEST(SparseStream, DenseRoundTripAndFrameCount) {
  LocalPair p;
  SparseVector v;
  v.reset(100, 100 + 200000, true);
  for (size_t i = 0; i < v.values.size(); ++i) v.values[i] = static_cast<uint32_t>(i * 3);
  ASSERT_TRUE(send_vector(*p.a, 1, 1, v.view()).is_ok());
  size_t frames = 0;
  SparseVector got;
  got.reset(100, 100 + 200000, true);
  ASSERT_TRUE(receive_vector(*p.b, 1, 1, 100, 100 + 200000, "test", [&](const Chunk& c) {
                ++frames;
                std::memcpy(got.values.data() + (c.first - 100), c.values, c.items * 4);
              }).is_ok());
  EXPECT_EQ(got.values, v.values);
  const size_t per_frame = chunk_capacity(true, 4);
  EXPECT_EQ(frames, (v.values.size() + per_frame - 1) / per_frame);
}

TEST(SparseStream, EmptyVectorIsOneFrame) {
  LocalPair p;
  SparseVector v;
  v.reset(0, 10, false);
  ASSERT_TRUE(send_vector(*p.a, 0, 1, v.view()).is_ok());
  size_t frames = 0;
  ASSERT_TRUE(receive_vector(*p.b, 0, 1, 0, 10, "test", [&](const Chunk& c) {
                ++frames;
                EXPECT_EQ(c.items, 0u);
              }).is_ok());
  EXPECT_EQ(frames, 1u);
}

TEST(SparseStream, ReaderRejectsBadChunks) {
  Chunk c;
  {
    ChunkReader r(0, 10, 0, 1, 3, "test");
    Status s = r.next(frame_of(0, 1, {2, 0, 1, 0, 0}, {4, 10, 1, 1}), c);  // index 10 is out of range
    EXPECT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("rank 3"), std::string::npos) << s.message();
  }
  {
    ChunkReader r(0, 10, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(0, 1, {2, 0, 1, 0, 0}, {5, 5, 1, 1}), c).is_ok());  // not increasing
  }
  {
    ChunkReader r(0, 10, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(0, 2, {0, 0, 1, 0, 0}, {}), c).is_ok());  // another collective
  }
  {
    ChunkReader r(0, 10, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(7, 1, {0, 0, 1, 0, 0}, {}), c).is_ok());  // another stream
  }
  {
    ChunkReader r(0, 10, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(0, 1, {2, 0, 1, 0, 0}, {1, 2, 3}), c).is_ok());  // short payload
  }
  {
    ChunkReader r(0, 4, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(0, 1, {3, 1, 1, 0, 0}, {1, 2, 3}), c).is_ok());  // dense stream ends early
  }
  {
    ChunkReader r(0, 4, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(0, 1, {2, 1, 0, 0, 1}, {1, 2}), c).is_ok());  // dense gap at the start
  }
  {
    ChunkReader r(0, 4, 0, 1, 3, "test");
    ASSERT_TRUE(r.next(frame_of(0, 1, {2, 1, 0, 0, 0}, {1, 2}), c).is_ok());
    EXPECT_FALSE(r.done());
    EXPECT_FALSE(r.next(frame_of(0, 1, {1, 0, 1, 0, 0}, {3, 1}), c).is_ok());  // switches representation
  }
}

TEST(SparseStream, SparseIndicesMustStayIncreasingAcrossFrames) {
  ChunkReader r(0, 100, 0, 1, 2, "test");
  Chunk c;
  ASSERT_TRUE(r.next(frame_of(0, 1, {2, 0, 0, 0, 0}, {10, 20, 1, 1}), c).is_ok());
  EXPECT_FALSE(r.next(frame_of(0, 1, {1, 0, 1, 0, 0}, {20, 1}), c).is_ok());
}

}  // namespace
}  // namespace omnib
