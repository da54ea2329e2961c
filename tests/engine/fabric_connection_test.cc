// FabricConnection over libfabric's tcp provider on loopback: the tests the
// TCP transport passes (transport_test.cc, deadline_test.cc), plus the
// fabric's own: credits, frame sizes around the inline limit, the local
// registration path, and a peer that closes.
#include "engine/build_features.h"
#if OMNIB_WITH_LIBFABRIC

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "engine/transport/fabric/fabric_wire.h"
#include "tests/support/fabric_peer.h"
#include "tests/support/store_peer.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using testing::make_fabric_pair;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + seed);
  return v;
}

TEST(FabricConnection, GatherSendAndCountedBytes) {
  auto p = make_fabric_pair(7, 7, milliseconds(5000));
  std::string x = "hello ", y = "world";
  iovec parts[2] = {{x.data(), x.size()}, {y.data(), y.size()}};
  ASSERT_TRUE(p->a->send(wire::FrameType::kControl, 3, 42, parts).is_ok());
  Frame f;
  Status got = p->b->recv(f);
  ASSERT_TRUE(got.is_ok()) << got.message();
  EXPECT_EQ(std::string(f.payload.begin(), f.payload.end()), "hello world");
  EXPECT_EQ(f.header.tag, 3u);
  EXPECT_EQ(f.header.seq, 42u);
  EXPECT_EQ(f.type(), wire::FrameType::kControl);
  EXPECT_EQ(p->a->counters().sent, sizeof(wire::FrameHeader) + 11);
  EXPECT_EQ(p->a->counters().frames_sent, 1u);
  EXPECT_EQ(p->b->counters().received, sizeof(wire::FrameHeader) + 11);
  EXPECT_EQ(p->b->counters().frames_received, 1u);
  EXPECT_TRUE(p->a->on_wire());
}

// Sizes at the edges of the head message and of several parts arrive whole
// and in order, both ways, whatever path the payload takes.
class FabricFrameSizes : public ::testing::TestWithParam<bool> {};

TEST_P(FabricFrameSizes, ArriveWholeAndInOrder) {
  auto p = make_fabric_pair(7, 7, milliseconds(10000), GetParam());
  const size_t inline_max = fabric_wire::kInlinePayload;
  const std::vector<size_t> sizes{0, 1, inline_max - 1, inline_max, inline_max + 1, 65536, 3 << 20, 16 << 20};
  std::thread sender([&] {
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto data = pattern(sizes[i], static_cast<uint8_t>(i));
      EXPECT_TRUE(p->a->send_bytes(wire::FrameType::kDense, 0, i, data.data(), data.size()).is_ok());
    }
  });
  Frame f;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Status got = p->b->recv(f);
    ASSERT_TRUE(got.is_ok()) << got.message();
    EXPECT_EQ(f.header.seq, i);
    const auto want = pattern(sizes[i], static_cast<uint8_t>(i));
    EXPECT_TRUE(std::equal(f.payload.begin(), f.payload.end(), want.begin(), want.end())) << sizes[i];
  }
  sender.join();
  uint64_t bytes = 0;
  for (size_t s : sizes) bytes += sizeof(wire::FrameHeader) + s;
  EXPECT_EQ(p->a->counters().sent, bytes);
  EXPECT_EQ(p->b->counters().received, bytes);
}

INSTANTIATE_TEST_SUITE_P(Registration, FabricFrameSizes, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "local_registration" : "no_registration"; });

TEST(FabricConnection, PostLendsTheCallersMemoryWhenItCan) {
  auto p = make_fabric_pair(7, 7, milliseconds(5000));
  auto big = pattern(1 << 20, 3);
  iovec one{big.data(), big.size()};
  auto t = p->a->post(wire::FrameType::kDense, 0, 0, std::span<const iovec>(&one, 1));
  ASSERT_TRUE(t.is_ok() && t.value());
  Frame f;
  ASSERT_TRUE(p->b->recv(f).is_ok());
  EXPECT_TRUE(std::equal(f.payload.begin(), f.payload.end(), big.begin(), big.end()));
  // Many parts (more than the provider takes at once) go through a copy.
  std::vector<iovec> many;
  for (size_t i = 0; i < 64; ++i) many.push_back({big.data() + i * 16384, 16384});
  ASSERT_TRUE(p->a->post(wire::FrameType::kDense, 0, 1, many).is_ok());
  ASSERT_TRUE(p->b->recv(f).is_ok());
  EXPECT_TRUE(std::equal(f.payload.begin(), f.payload.end(), big.begin(), big.end()));
  const auto paths = p->a->send_paths();
  EXPECT_EQ(paths.zero_copy, 1u);
  EXPECT_EQ(paths.copied, 1u);
  EXPECT_TRUE(testing::eventually([&] { return p->a->sends_done() == 2; }, milliseconds(5000)));
}

// Checked on arrival: a lane that only polls (try_recv) never sees the frame.
TEST(FabricConnection, RejectsAFrameOfAnotherJob) {
  auto p = make_fabric_pair(7, 8, milliseconds(3000));
  ASSERT_TRUE(p->a->send_bytes(wire::FrameType::kControl, 0, 0, "x", 1).is_ok());
  Frame f;
  Result<bool> got = false;
  EXPECT_TRUE(testing::eventually(
      [&] {
        got = p->b->try_recv(f);
        return !got.is_ok() || got.value();
      },
      milliseconds(3000)));
  EXPECT_EQ(got.status().code(), Code::kUnavailable);
  EXPECT_NE(got.status().message().find("job"), std::string::npos) << got.status().message();
  EXPECT_EQ(p->b->recv(f).code(), Code::kUnavailable);
}

TEST(FabricConnection, SilentPeerTimesOut) {
  auto p = make_fabric_pair(7, 7, milliseconds(300));
  Frame f;
  const auto start = Clock::now();
  Status s = p->b->recv(f);
  EXPECT_EQ(s.code(), Code::kTimeout) << s.message();
  EXPECT_LT(seconds_since(start), 2.0);
}

TEST(FabricConnection, ClosedPeerIsUnavailable) {
  auto p = make_fabric_pair(7, 7, milliseconds(5000));
  p->a.reset();
  Frame f;
  const auto start = Clock::now();
  Status s = p->b->recv(f);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.message();
  EXPECT_LT(seconds_since(start), 2.0) << "the closing notice, not the timeout, should end the wait";
}

// send() returns once a frame is queued, as a socket write does: a
// connection that goes right after still sends what waits for credit,
// then the closing notice, as a closed socket still delivers its buffer.
TEST(FabricConnection, AClosingConnectionSendsWhatWasQueuedFirst) {
  auto p = make_fabric_pair(7, 7, milliseconds(5000));
  p->a->set_windows(16, 32, 0);
  int taken = 0;
  Status last;
  std::thread reader([&] {
    std::this_thread::sleep_for(milliseconds(100));  // the frames past b's window (16) wait
    Frame f;
    while ((last = p->b->recv(f)).is_ok()) ++taken;
  });
  for (int i = 0; i < 24; ++i) ASSERT_TRUE(p->a->send_bytes(wire::FrameType::kDense, 0, i, "abc", 3).is_ok());
  p->a.reset();
  reader.join();
  EXPECT_EQ(taken, 24);
  EXPECT_EQ(last.code(), Code::kUnavailable) << last.message();
}

// A closing notice says how many frames the peer sent whole: those are
// delivered first, even when the notice overtakes the rest of one of them
// (a peer that finished its part of a collective and closed its links).
TEST(FabricConnection, FramesSentBeforeTheClosingNoticeAreDeliveredFirst) {
  auto p = make_fabric_pair(7, 7, milliseconds(3000));
  // Frame 0, sent by hand where a's connection would send it: its head, the
  // notice (one frame sent whole), and only then the rest of its payload.
  const auto to_b = [&](fabric_wire::Kind kind, const void* data, size_t n) {
    return testing::send_raw_fabric(*p->ep_a, p->a_to_b, fabric_wire::tag(kind, testing::FabricPair::kConnB, 0),
                                    std::string(static_cast<const char*>(data), n));
  };
  const std::string payload(100000, 'r');
  const wire::FrameHeader h = make_header(wire::FrameType::kDense, 7, 0, 0, payload.size());
  const fabric_wire::Control closing{wire::kMagic, static_cast<uint32_t>(fabric_wire::ControlType::kClose), 1, 0, 0};
  ASSERT_TRUE(to_b(fabric_wire::Kind::kHead, &h, sizeof(h)));
  ASSERT_TRUE(to_b(fabric_wire::Kind::kControl, &closing, sizeof(closing)));
  std::this_thread::sleep_for(milliseconds(200));  // b has read the notice
  ASSERT_TRUE(to_b(fabric_wire::Kind::kRest, payload.data(), payload.size()));
  Frame f;
  Status s = p->b->recv(f);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(f.payload.size(), payload.size());
  s = p->b->recv(f);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.message();
  EXPECT_NE(s.message().find("closed the link"), std::string::npos) << s.message();
}

TEST(FabricConnection, AbortUnblocksAWaitingReceiver) {
  auto p = make_fabric_pair(7, 7, milliseconds(10000));
  Status s;
  std::thread waiter([&] {
    Frame f;
    s = p->b->recv(f);
  });
  std::this_thread::sleep_for(milliseconds(50));
  const auto start = Clock::now();
  p->b->abort();
  waiter.join();
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_LT(seconds_since(start), 2.0);
  // The other end hears of it too.
  Frame f;
  EXPECT_EQ(p->a->recv(f).code(), Code::kUnavailable);
}

// A receiver that takes nothing holds the sender back at its window plus
// the sender's. The grant made as the link opened may be the default window
// (16) if it left before set_windows; once those frames are taken, the
// window of 4 holds exactly.
TEST(FabricConnection, AReceiverThatTakesNothingHoldsTheSenderBack) {
  auto p = make_fabric_pair(7, 7, milliseconds(600));
  p->b->set_windows(4, 4, 0);
  p->a->set_windows(4, 4, 0);
  // Sends frames numbered from `first` until one times out; how many went.
  auto send_until_held = [&](int first) {
    int sent = 0;
    Status s;
    const auto start = Clock::now();
    for (; sent < 100; ++sent) {
      s = p->a->send_bytes(wire::FrameType::kDense, 0, first + sent, "abc", 3);
      if (!s.is_ok()) break;
    }
    EXPECT_EQ(s.code(), Code::kTimeout) << s.message();
    EXPECT_LT(seconds_since(start), 3.0);
    return sent;
  };
  // Taking the frames lets the rest through, in order.
  Frame f;
  auto take = [&](int first, int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(p->b->recv(f).is_ok());
      EXPECT_EQ(f.header.seq, static_cast<uint64_t>(first + i));
    }
  };
  const int opening = send_until_held(0);
  EXPECT_LE(opening, 16 + 4);
  EXPECT_GE(opening, 4);
  take(0, opening);
  const int held = send_until_held(opening);
  EXPECT_EQ(held, 4 + 4) << "the receiver's window (4) and the sender's (4)";
  take(opening, held);
}

// With a byte budget a sender starts frames only while the bytes it has in
// flight towards the receiver stay within it (or nothing is in flight). The
// receiver is played by hand: it grants 100 frames and 10000 bytes, and
// lets nothing arrive.
TEST(FabricConnection, AReceiversByteBudgetHoldsFramesBack) {
  auto p = make_fabric_pair(7, 7, milliseconds(5000), false, /*with_b=*/false);
  const fabric_wire::Control grant{wire::kMagic, static_cast<uint32_t>(fabric_wire::ControlType::kCredit), 100, 0,
                                   10000};
  ASSERT_TRUE(testing::send_raw_fabric(*p->ep_b, p->b_to_a,
                                       fabric_wire::tag(fabric_wire::Kind::kControl, testing::FabricPair::kConnA),
                                       std::string(reinterpret_cast<const char*>(&grant), sizeof(grant))));
  std::vector<uint8_t> frame(3000, 1);
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(p->a->send_bytes(wire::FrameType::kDense, 0, i, frame.data(), frame.size()).is_ok());
  // 3 frames of 3032 bytes fit in 10000; a fourth would not.
  EXPECT_TRUE(testing::eventually([&] { return p->a->sends_done() == 3; }, milliseconds(3000))) << p->a->sends_done();
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(p->a->sends_done(), 3u);
}

// A credit is cumulative and counts bytes this end sent: one that claims
// more is a corrupt or hostile peer, and ends the link (as on TCP).
TEST(FabricConnection, ACreditForBytesNeverSentFailsTheLink) {
  auto p = make_fabric_pair(7, 7, milliseconds(3000), false, /*with_b=*/false);
  const fabric_wire::Control grant{wire::kMagic, static_cast<uint32_t>(fabric_wire::ControlType::kCredit), 100,
                                   5000, 10000};
  ASSERT_TRUE(testing::send_raw_fabric(*p->ep_b, p->b_to_a,
                                       fabric_wire::tag(fabric_wire::Kind::kControl, testing::FabricPair::kConnA),
                                       std::string(reinterpret_cast<const char*>(&grant), sizeof(grant))));
  EXPECT_TRUE(testing::eventually([&] { return !p->a->health().is_ok(); }, milliseconds(3000)));
  EXPECT_NE(p->a->health().message().find("more bytes than were sent"), std::string::npos) << p->a->health().message();
}

// With a byte budget a receiver grants head receives for the small frames
// the budget may hold (one per 4 KiB, at most 64), not only its window: a
// sparse stream's frames flow a budget per credit round trip, as through a
// TCP socket's receive buffer.
TEST(FabricConnection, AByteBudgetGrantsHeadsForSmallFrames) {
  auto p = make_fabric_pair(7, 7, milliseconds(5000));
  p->b->set_windows(2, 4, 256 << 10);  // 2 + 64 frames
  p->a->set_windows(16, 100, 0);
  std::this_thread::sleep_for(milliseconds(200));  // b's budget has reached a
  for (int i = 0; i < 80; ++i) ASSERT_TRUE(p->a->send_bytes(wire::FrameType::kDense, 0, i, "abc", 3).is_ok());
  EXPECT_TRUE(testing::eventually([&] { return p->a->sends_done() == 66; }, milliseconds(3000))) << p->a->sends_done();
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(p->a->sends_done(), 66u);
}

// Frames a receiver holds beyond its window count against the budget until
// its reader takes them, as unread bytes in a socket's buffer do; taking
// one lets one more frame's bytes through.
TEST(FabricConnection, FramesHeldBeyondTheWindowCountAgainstTheBudget) {
  auto p = make_fabric_pair(7, 7, milliseconds(5000));
  p->b->set_windows(2, 4, 40960);  // 2 + 10 frames
  p->a->set_windows(16, 100, 0);
  std::this_thread::sleep_for(milliseconds(200));
  std::vector<uint8_t> frame(10000, 1);  // 10032 bytes with its header
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(p->a->send_bytes(wire::FrameType::kDense, 0, i, frame.data(), frame.size()).is_ok());
  // 2 frames read (the window) + 4 more within 40960 bytes.
  EXPECT_TRUE(testing::eventually([&] { return p->a->sends_done() == 6; }, milliseconds(3000))) << p->a->sends_done();
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(p->a->sends_done(), 6u);
  Frame f;
  ASSERT_TRUE(p->b->recv(f).is_ok());
  EXPECT_TRUE(testing::eventually([&] { return p->a->sends_done() == 7; }, milliseconds(3000))) << p->a->sends_done();
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(p->a->sends_done(), 7u);
}

TEST(FabricConnection, WakersHearOfArrivalsAndFinishedSends) {
  auto p = make_fabric_pair(7, 7, milliseconds(5000));
  Waker received, sent;
  p->b->set_wakers(&received, nullptr);
  p->a->set_wakers(nullptr, &sent);
  const uint64_t r0 = received.mark(), s0 = sent.mark();
  auto payload = pattern(100000, 1);
  iovec one{payload.data(), payload.size()};
  auto t = p->a->post(wire::FrameType::kDense, 0, 0, std::span<const iovec>(&one, 1));
  ASSERT_TRUE(t.is_ok() && t.value());
  EXPECT_TRUE(sent.wait_since(s0, Clock::now() + std::chrono::seconds(5)));
  EXPECT_TRUE(received.wait_since(r0, Clock::now() + std::chrono::seconds(5)));
  Frame f;
  EXPECT_TRUE(testing::eventually([&] { return p->b->try_recv(f).value(); }, milliseconds(5000)));
  EXPECT_EQ(f.payload.size(), payload.size());
}

// A peer whose frame never comes whole: the header, then nothing.
TEST(FabricDeadlines, AFrameThatNeverArrivesWholeCannotStretchAReceive) {
  auto p = make_fabric_pair(7, 7, milliseconds(800));
  const wire::FrameHeader h = make_header(wire::FrameType::kDense, 7, 0, 0, 100000);
  const std::string head(reinterpret_cast<const char*>(&h), sizeof(h));
  // Frame 0's head, sent by hand where a's connection would send it.
  ASSERT_TRUE(testing::send_raw_fabric(*p->ep_a, p->a_to_b,
                                       fabric_wire::tag(fabric_wire::Kind::kHead, testing::FabricPair::kConnB, 0), head));
  const auto start = Clock::now();
  Frame f;
  Status s = p->b->recv(f);
  EXPECT_EQ(s.code(), Code::kTimeout) << s.message();
  EXPECT_NE(s.message().find("did not arrive whole"), std::string::npos) << s.message();
  EXPECT_GT(seconds_since(start), 0.75);
  EXPECT_LT(seconds_since(start), 1.8);
}

// A head that announces more than it carries, or too much, ends the link.
TEST(FabricConnection, AHeadThatDisagreesWithItsLengthIsRejected) {
  auto p = make_fabric_pair(7, 7, milliseconds(3000));
  const wire::FrameHeader h = make_header(wire::FrameType::kDense, 7, 0, 0, 10);
  const std::string head = std::string(reinterpret_cast<const char*>(&h), sizeof(h)) + "short";
  ASSERT_TRUE(testing::send_raw_fabric(*p->ep_a, p->a_to_b,
                                       fabric_wire::tag(fabric_wire::Kind::kHead, testing::FabricPair::kConnB, 0), head));
  Frame f;
  Status s = p->b->recv(f);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.message();
  EXPECT_NE(s.message().find("head message of 37 bytes"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace omnib

#endif  // OMNIB_WITH_LIBFABRIC
