// Credits on TCP links: with a byte budget the receiver says what its reader
// took and the sender stays within that plus the budget (docs/wire-format.md,
// "Credits on TCP links").
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "engine/transport/tcp/tcp_connection.h"
#include "tests/support/tcp_pair.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;

constexpr size_t kPayload = 1024;
constexpr size_t kFrame = sizeof(wire::FrameHeader) + kPayload;
constexpr size_t kBudget = 8192;

std::vector<uint8_t> payload_of(int i) { return std::vector<uint8_t>(kPayload, static_cast<uint8_t>(i)); }

// A round trip from `receiver` to `sender`: once the sender has the frame,
// it has read every credit the receiver sent before it.
void round_trip(TcpConnection& receiver, TcpConnection& sender) {
  ASSERT_TRUE(receiver.send_bytes(wire::FrameType::kControl, 9, 0, "k", 1).is_ok());
  Frame f;
  ASSERT_TRUE(sender.recv(f).is_ok());
}

TEST(TcpCredits, BudgetBoundsTheBytesAReaderHasNotTaken) {
  TcpPair p(7, 7, milliseconds(5000));
  p.b->set_windows(2, 16, kBudget);
  p.a->set_windows(2, 64, 0);
  round_trip(*p.b, *p.a);

  const int frames = 64;
  std::vector<std::vector<uint8_t>> payloads;
  for (int i = 0; i < frames; ++i) payloads.push_back(payload_of(i));
  for (int i = 0; i < frames; ++i) {
    iovec part{payloads[i].data(), kPayload};
    auto ticket = p.a->post(wire::FrameType::kDense, 0, static_cast<uint64_t>(i), std::span<const iovec>(&part, 1));
    ASSERT_TRUE(ticket.is_ok());
    ASSERT_TRUE(ticket.value().has_value());
  }
  std::this_thread::sleep_for(milliseconds(300));
  // The reader took nothing: its window's two frames, the budget and, past
  // it, one frame started with at most a quarter of the budget unread.
  EXPECT_LE(p.b->counters().received, 2 * kFrame + kBudget + kFrame);
  EXPECT_LT(p.a->sends_done(), static_cast<uint64_t>(frames));

  for (int i = 0; i < frames; ++i) {
    Frame f;
    ASSERT_TRUE(p.b->recv(f).is_ok()) << "frame " << i;
    EXPECT_EQ(f.header.seq, static_cast<uint64_t>(i));
    EXPECT_EQ(std::vector<uint8_t>(f.payload.begin(), f.payload.end()), payloads[i]);
  }
  // Credits are flow control, not frames: only the round trip's frame counts.
  EXPECT_EQ(p.a->counters().frames_received, 1u);
  EXPECT_EQ(p.a->counters().received, sizeof(wire::FrameHeader) + 1);
  EXPECT_EQ(p.b->counters().received, frames * kFrame);
}

// A stalls on the reply link until B has all of A's frames; meanwhile B's
// frames fill A's window on the data link, ahead of the credits A needs. A
// loop that stopped reading at a full window held those credits up, and
// neither end moved again.
TEST(TcpCredits, CreditsBehindUnreadFramesStillArrive) {
  TcpPair data(7, 7, milliseconds(3000));
  TcpPair reply(7, 7, milliseconds(3000));
  data.a->set_windows(2, 4, kBudget);
  data.b->set_windows(2, 4, kBudget);
  round_trip(*data.a, *data.b);
  round_trip(*data.b, *data.a);

  const int frames = 64;
  const std::vector<uint8_t> bytes(kPayload, 1);
  Status a_sent, b_sent, b_got, a_got;
  std::thread a_sender([&] {
    for (int i = 0; i < frames && a_sent.is_ok(); ++i)
      a_sent = data.a->send_bytes(wire::FrameType::kDense, 0, 0, bytes.data(), bytes.size());
  });
  std::thread b_sender([&] {
    for (int i = 0; i < frames && b_sent.is_ok(); ++i)
      b_sent = data.b->send_bytes(wire::FrameType::kDense, 0, 0, bytes.data(), bytes.size());
  });
  std::thread b_reader([&] {
    Frame f;
    for (int i = 0; i < frames && b_got.is_ok(); ++i) b_got = data.b->recv(f);
    if (b_got.is_ok()) b_got = reply.b->send_bytes(wire::FrameType::kControl, 0, 0, "done", 4);
  });
  Frame f;
  a_got = reply.a->recv(f);
  for (int i = 0; i < frames && a_got.is_ok(); ++i) a_got = data.a->recv(f);
  a_sender.join();
  b_sender.join();
  b_reader.join();
  EXPECT_TRUE(a_sent.is_ok()) << a_sent.message();
  EXPECT_TRUE(b_sent.is_ok()) << b_sent.message();
  EXPECT_TRUE(b_got.is_ok()) << b_got.message();
  EXPECT_TRUE(a_got.is_ok()) << a_got.message();
}

TEST(TcpCredits, WithoutABudgetTheWindowHoldsTheReaderBack) {
  TcpPair p(7, 7, milliseconds(5000));
  p.b->set_windows(2, 16, 0);
  p.a->set_windows(2, 64, 0);
  const std::vector<uint8_t> bytes(kPayload, 3);
  for (int i = 0; i < 16; ++i) {
    iovec part{const_cast<uint8_t*>(bytes.data()), kPayload};
    ASSERT_TRUE(p.a->post(wire::FrameType::kDense, 0, 0, std::span<const iovec>(&part, 1)).is_ok());
  }
  std::this_thread::sleep_for(milliseconds(200));
  // The loop stopped at two frames; the rest wait in the kernel's buffers.
  EXPECT_EQ(p.b->counters().frames_received, 2u);
  EXPECT_EQ(p.a->counters().frames_received, 0u);  // no credits either
  Frame f;
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(p.b->recv(f).is_ok());
}

// Frame `i` of a stream: its length and every byte follow from `i`. Every
// fifth is longer than a small send buffer takes at once.
std::vector<uint8_t> varied_payload(int i) {
  const size_t length = i % 5 == 0 ? 40000 + static_cast<size_t>(i) * 97 : 1 + static_cast<size_t>(i) * 389 % 6000;
  std::vector<uint8_t> bytes(length);
  for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = static_cast<uint8_t>(i * 7 + j);
  return bytes;
}

// Posts `payloads` in order on `conn`, as fast as its send window lets,
// for at most 20 s.
Status post_all(TcpConnection& conn, const std::vector<std::vector<uint8_t>>& payloads) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (size_t i = 0; i < payloads.size(); ++i) {
    iovec part{const_cast<uint8_t*>(payloads[i].data()), payloads[i].size()};
    while (true) {
      auto ticket = conn.post(wire::FrameType::kDense, 0, i, std::span<const iovec>(&part, 1));
      if (!ticket.is_ok()) return ticket.status();
      if (ticket.value()) break;
      if (std::chrono::steady_clock::now() > deadline)
        return timeout_error("frame " + std::to_string(i) + " found no room in the send window for 20 s");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  return Status::ok();
}

// Receives `payloads` on `conn` and says which frame first differed.
Status expect_all(TcpConnection& conn, const std::vector<std::vector<uint8_t>>& payloads) {
  for (size_t i = 0; i < payloads.size(); ++i) {
    Frame f;
    OMNIB_RETURN_IF_ERROR(conn.recv(f));
    if (f.header.seq != i || std::vector<uint8_t>(f.payload.begin(), f.payload.end()) != payloads[i])
      return internal_error("frame " + std::to_string(i) + " arrived as frame " + std::to_string(f.header.seq) +
                            " with " + std::to_string(f.payload.size()) + " bytes");
  }
  return Status::ok();
}

// Both ends stream to each other with budgets, so each has credits to send
// while its own frames wait: the credits go in one system call with the
// next frame. The send buffers are as small as the kernel allows, so
// writes end anywhere, inside a credit too; every frame still arrives
// whole and in order, both ways. (Receive buffers that small stall each
// frame on TCP's zero-window probes, which tells nothing about ours.)
TEST(TcpCredits, CreditsRideWithFramesAndSurvivePartialWrites) {
  auto [fd_a, fd_b] = connected_sockets();
  for (int fd : {fd_a, fd_b}) {
    const int small = 1;  // the kernel rounds it up to its minimum
    ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
  }
  TcpConnection a(fd_a, 1, 7, milliseconds(10000));
  TcpConnection b(fd_b, 0, 7, milliseconds(10000));
  a.set_windows(2, 16, kBudget);
  b.set_windows(2, 16, kBudget);

  const int frames = 400;
  std::vector<std::vector<uint8_t>> payloads;
  for (int i = 0; i < frames; ++i) payloads.push_back(varied_payload(i));
  Status a_sent, b_sent, a_got, b_got;
  std::thread a_sender([&] { a_sent = post_all(a, payloads); });
  std::thread b_sender([&] { b_sent = post_all(b, payloads); });
  std::thread a_reader([&] { a_got = expect_all(a, payloads); });
  b_got = expect_all(b, payloads);
  a_sender.join();
  b_sender.join();
  a_reader.join();
  EXPECT_TRUE(a_sent.is_ok()) << a_sent.message();
  EXPECT_TRUE(b_sent.is_ok()) << b_sent.message();
  EXPECT_TRUE(a_got.is_ok()) << a_got.message();
  EXPECT_TRUE(b_got.is_ok()) << b_got.message();
  EXPECT_GT(a.credits_sent_with_frames() + b.credits_sent_with_frames(), 0u);
}

void write_raw(int fd, const void* data, size_t n) {
  ASSERT_EQ(::send(fd, data, n, MSG_NOSIGNAL), static_cast<ssize_t>(n));
}

TEST(TcpCredits, ACreditWithAPayloadFailsTheLink) {
  RawPeer peer(7, milliseconds(2000));
  const wire::FrameHeader h = make_header(wire::FrameType::kCredit, 7, kBudget, 0, 8);
  write_raw(peer.raw, &h, sizeof(h));
  write_raw(peer.raw, "12345678", 8);
  Frame f;
  const Status s = peer.conn->recv(f);
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_NE(s.message().find("credit frame with 8 payload bytes"), std::string::npos) << s.message();
}

TEST(TcpCredits, ACreditForBytesNeverSentFailsTheLink) {
  RawPeer peer(7, milliseconds(2000));
  const wire::FrameHeader h = make_header(wire::FrameType::kCredit, 7, kBudget, 4096, 0);
  write_raw(peer.raw, &h, sizeof(h));
  Frame f;
  const Status s = peer.conn->recv(f);
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_NE(s.message().find("only 0 were sent"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace omnib
