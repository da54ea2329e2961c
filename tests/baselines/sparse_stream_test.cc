#include "baselines/common/sparse_stream.h"

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
  v.reset(0, 1u << 24, false, 4);
  for (uint32_t i = 0; i < 100000; ++i) {
    v.indices.push_back(i * 7 + 3);
    const uint32_t value = i + 1;
    v.values.insert(v.values.end(), reinterpret_cast<const uint8_t*>(&value),
                    reinterpret_cast<const uint8_t*>(&value) + 4);
  }
  ASSERT_TRUE(send_vector(*p.a, 5, 9, v.view()).is_ok());
  SparseVector got;
  ASSERT_TRUE(receive_vector(*p.b, 5, 9, 0, 1u << 24, 4, "test", got).is_ok());
  EXPECT_FALSE(got.dense);
  EXPECT_EQ(got.indices, v.indices);
  EXPECT_EQ(got.values, v.values);
}

// Dense streams of 4- and 2-byte elements: every value arrives, in frames
// of chunk_capacity() items.
void dense_round_trip(size_t elem_size) {
  LocalPair p;
  SparseVector v;
  v.reset(100, 100 + 200000, true, elem_size);
  for (size_t i = 0; i < v.values.size(); ++i) v.values[i] = static_cast<uint8_t>(i * 3);
  ASSERT_TRUE(send_vector(*p.a, 1, 1, v.view()).is_ok());
  size_t frames = 0;
  SparseVector got;
  got.reset(100, 100 + 200000, true, elem_size);
  ASSERT_TRUE(receive_vector(*p.b, 1, 1, 100, 100 + 200000, elem_size, "test", [&](const Chunk& c) {
                ++frames;
                EXPECT_EQ(c.elem_size, elem_size);
                std::memcpy(got.values.data() + (c.first - 100) * elem_size, c.values, c.items * elem_size);
              }).is_ok());
  EXPECT_EQ(got.values, v.values);
  const size_t per_frame = chunk_capacity(true, elem_size);
  EXPECT_EQ(frames, (v.view().length() + per_frame - 1) / per_frame);
}

TEST(SparseStream, DenseRoundTripAndFrameCount) { dense_round_trip(4); }

TEST(SparseStream, DenseRoundTripOf16BitElements) { dense_round_trip(2); }

TEST(SparseStream, SparseRoundTripOf16BitElements) {
  LocalPair p;
  SparseVector v;
  v.reset(0, 1000, false, 2);
  v.indices = {3, 500, 999};
  v.values = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(send_vector(*p.a, 2, 3, v.view()).is_ok());
  SparseVector got;
  ASSERT_TRUE(receive_vector(*p.b, 2, 3, 0, 1000, 2, "test", got).is_ok());
  EXPECT_EQ(got.indices, v.indices);
  EXPECT_EQ(got.values, v.values);
  EXPECT_EQ(got.elem_size, 2u);
}

TEST(SparseStream, EmptyVectorIsOneFrame) {
  LocalPair p;
  SparseVector v;
  v.reset(0, 10, false, 4);
  ASSERT_TRUE(send_vector(*p.a, 0, 1, v.view()).is_ok());
  size_t frames = 0;
  ASSERT_TRUE(receive_vector(*p.b, 0, 1, 0, 10, 4, "test", [&](const Chunk& c) {
                ++frames;
                EXPECT_EQ(c.items, 0u);
              }).is_ok());
  EXPECT_EQ(frames, 1u);
}

TEST(SparseStream, ReaderRejectsBadChunks) {
  Chunk c;
  {
    ChunkReader r(0, 10, 4, 0, 1, 3, "test");
    Status s = r.next(frame_of(0, 1, {2, 0, 1, 0, 0}, {4, 10, 1, 1}), c);  // index 10 is out of range
    EXPECT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("rank 3"), std::string::npos) << s.message();
  }
  {
    ChunkReader r(0, 10, 4, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(0, 1, {2, 0, 1, 0, 0}, {5, 5, 1, 1}), c).is_ok());  // not increasing
  }
  {
    ChunkReader r(0, 10, 4, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(0, 2, {0, 0, 1, 0, 0}, {}), c).is_ok());  // another collective
  }
  {
    ChunkReader r(0, 10, 4, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(7, 1, {0, 0, 1, 0, 0}, {}), c).is_ok());  // another stream
  }
  {
    ChunkReader r(0, 10, 4, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(0, 1, {2, 0, 1, 0, 0}, {1, 2, 3}), c).is_ok());  // short payload
  }
  {
    ChunkReader r(0, 4, 4, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(0, 1, {3, 1, 1, 0, 0}, {1, 2, 3}), c).is_ok());  // dense stream ends early
  }
  {
    ChunkReader r(0, 4, 4, 0, 1, 3, "test");
    EXPECT_FALSE(r.next(frame_of(0, 1, {2, 1, 0, 0, 1}, {1, 2}), c).is_ok());  // dense gap at the start
  }
  {
    ChunkReader r(0, 4, 4, 0, 1, 3, "test");
    ASSERT_TRUE(r.next(frame_of(0, 1, {2, 1, 0, 0, 0}, {1, 2}), c).is_ok());
    EXPECT_FALSE(r.done());
    EXPECT_FALSE(r.next(frame_of(0, 1, {1, 0, 1, 0, 0}, {3, 1}), c).is_ok());  // switches representation
  }
}

TEST(SparseStream, SparseIndicesMustStayIncreasingAcrossFrames) {
  ChunkReader r(0, 100, 4, 0, 1, 2, "test");
  Chunk c;
  ASSERT_TRUE(r.next(frame_of(0, 1, {2, 0, 0, 0, 0}, {10, 20, 1, 1}), c).is_ok());
  EXPECT_FALSE(r.next(frame_of(0, 1, {1, 0, 1, 0, 0}, {20, 1}), c).is_ok());
}

TEST(SparseStream, ReaderChecksLengthsAtTheElementSize) {
  // Two pairs of 2-byte values: 8 index bytes and 4 value bytes (three words).
  const Frame f = frame_of(0, 1, {2, 0, 1, 0, 0}, {3, 7, 0x00020001});
  Chunk c;
  ChunkReader wide(0, 10, 4, 0, 1, 3, "test");
  EXPECT_FALSE(wide.next(f, c).is_ok());
  ChunkReader narrow(0, 10, 2, 0, 1, 3, "test");
  ASSERT_TRUE(narrow.next(f, c).is_ok());
  EXPECT_EQ(c.elem_size, 2u);
  EXPECT_EQ(c.values[0], 1);
  EXPECT_EQ(c.values[2], 2);
}

}  // namespace
}  // namespace omnib
