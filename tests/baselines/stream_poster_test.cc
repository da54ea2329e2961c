// Posted streams must be the frames send_vector() sends, byte for byte
// (the wire format and the byte counts do not depend on how a lane sends),
// however often the send window fills.
#include "baselines/common/stream_poster.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/transport/local_connection.h"

namespace omnib {
namespace {

constexpr uint32_t kTag = 5;
constexpr uint64_t kSeq = 12;

struct SeenFrame {
  wire::FrameHeader header;
  std::vector<uint8_t> payload;
};

std::vector<SeenFrame> drain(Connection& link) {
  std::vector<SeenFrame> frames;
  Frame f;
  while (link.try_recv(f).value()) frames.push_back({f.header, {f.payload.data(), f.payload.data() + f.payload.size()}});
  return frames;
}

void expect_same_frames(const VectorView& v) {
  auto [ref_out, ref_in] = LocalConnection::make_pair(1, std::chrono::seconds(5), 64);
  ASSERT_TRUE(send_vector(*ref_out, kTag, kSeq, v).is_ok());
  const std::vector<SeenFrame> expected = drain(*ref_in);

  // A window of two frames: the poster must stop and resume.
  auto [out, in] = LocalConnection::make_pair(1, std::chrono::seconds(5), 2);
  StreamPoster poster;
  poster.attach(*out);
  poster.start(kTag, kSeq, v);
  std::vector<SeenFrame> got;
  for (int rounds = 0; !poster.all_posted(); ++rounds) {
    ASSERT_LT(rounds, 1000) << "the poster made no progress";
    auto posted = poster.post_more();
    ASSERT_TRUE(posted.is_ok()) << posted.status().message();
    for (auto& f : drain(*in)) got.push_back(std::move(f));
  }
  for (auto& f : drain(*in)) got.push_back(std::move(f));
  EXPECT_TRUE(poster.finished());
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(std::memcmp(&got[i].header, &expected[i].header, sizeof(wire::FrameHeader)), 0) << "frame " << i;
    EXPECT_EQ(got[i].payload, expected[i].payload) << "frame " << i;
  }
}

TEST(StreamPoster, DenseStreamOfManyFrames) {
  std::vector<float> t(300000);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(i % 97);
  SparseVector scratch;
  const VectorView v = extract_smaller(t.data(), 1000, 290000, 4, scratch);
  ASSERT_TRUE(v.dense);
  expect_same_frames(v);
}

TEST(StreamPoster, SparseStreamOfManyFrames) {
  std::vector<float> t(2000000, 0.0f);
  for (size_t i = 0; i < t.size(); i += 7) t[i] = 1.5f;
  SparseVector scratch;
  const VectorView v = extract_smaller(t.data(), 0, t.size(), 4, scratch);
  ASSERT_FALSE(v.dense);
  expect_same_frames(v);
}

TEST(StreamPoster, EmptyStreamIsOneFrame) {
  std::vector<float> t(100, 0.0f);
  SparseVector scratch;
  expect_same_frames(extract_smaller(t.data(), 10, 90, 4, scratch));
}

TEST(StreamPoster, StreamsFollowOneAnotherOnALink) {
  auto [out, in] = LocalConnection::make_pair(1, std::chrono::seconds(5), 1);
  std::vector<float> t(50, 2.0f);
  SparseVector scratch;
  const VectorView v = extract_smaller(t.data(), 0, 50, 4, scratch);
  StreamPoster poster;
  poster.attach(*out);
  size_t frames = 0;
  for (uint32_t tag : {1u, 2u, 3u}) {
    poster.start(tag, kSeq, v);
    while (!poster.all_posted()) ASSERT_TRUE(poster.post_more().is_ok());
    for (const auto& f : drain(*in)) {
      EXPECT_EQ(f.header.tag, tag);
      ++frames;
    }
  }
  EXPECT_EQ(frames, 3u);
}

}  // namespace
}  // namespace omnib
