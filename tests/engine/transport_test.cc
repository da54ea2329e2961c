#include <gtest/gtest.h>

#include <algorithm>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "engine/transport/local_connection.h"
#include "engine/sockets/socket_util.h"
#include "engine/transport/tcp/tcp_connection.h"
#include "tests/support/tcp_pair.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;

TEST(TcpConnection, GatherSendAndCountedBytes) {
  TcpPair p(7, 7, milliseconds(2000));
  std::string x = "hello ", y = "world";
  iovec parts[2] = {{x.data(), x.size()}, {y.data(), y.size()}};
  ASSERT_TRUE(p.a->send(wire::FrameType::kControl, 3, 42, parts).is_ok());
  Frame f;
  ASSERT_TRUE(p.b->recv(f).is_ok());
  EXPECT_EQ(std::string(f.payload.begin(), f.payload.end()), "hello world");
  EXPECT_EQ(f.header.tag, 3u);
  EXPECT_EQ(f.header.seq, 42u);
  EXPECT_EQ(f.type(), wire::FrameType::kControl);
  EXPECT_EQ(p.a->counters().sent, sizeof(wire::FrameHeader) + 11);
  EXPECT_EQ(p.b->counters().received, sizeof(wire::FrameHeader) + 11);
}

TEST(TcpConnection, LargeFramesArriveWhole) {
  TcpPair p(7, 7, milliseconds(5000));
  std::vector<uint8_t> big(16 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 31);
  std::thread sender([&] { EXPECT_TRUE(p.a->send_bytes(wire::FrameType::kDense, 0, 1, big.data(), big.size()).is_ok()); });
  Frame f;
  ASSERT_TRUE(p.b->recv(f).is_ok());
  sender.join();
  EXPECT_TRUE(std::equal(f.payload.begin(), f.payload.end(), big.begin(), big.end()));
}

TEST(TcpConnection, RejectsAFrameOfAnotherJob) {
  TcpPair p(7, 8, milliseconds(2000));
  ASSERT_TRUE(p.a->send_bytes(wire::FrameType::kControl, 0, 0, "x", 1).is_ok());
  Frame f;
  Status s = p.b->recv(f);
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_NE(s.message().find("job"), std::string::npos) << s.message();
}

TEST(FrameHeader, ValidationNamesWhatIsWrong) {
  wire::FrameHeader h = make_header(wire::FrameType::kControl, 7, 0, 0, 0);
  EXPECT_TRUE(validate_header(h, 7, 1).is_ok());
  h.magic = 0x12345678;
  EXPECT_NE(validate_header(h, 7, 1).message().find("magic"), std::string::npos);
  h.magic = wire::kMagic;
  h.version = 99;
  EXPECT_NE(validate_header(h, 7, 1).message().find("version"), std::string::npos);
  h.version = wire::kVersion;
  h.length = wire::kMaxPayload + 1;
  EXPECT_FALSE(validate_header(h, 7, 1).is_ok());
}

TEST(TcpConnection, SilentPeerTimesOut) {
  TcpPair p(7, 7, milliseconds(200));
  Frame f;
  auto start = std::chrono::steady_clock::now();
  Status s = p.b->recv(f);
  EXPECT_EQ(s.code(), Code::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(TcpConnection, ClosedPeerIsUnavailable) {
  TcpPair p(7, 7, milliseconds(2000));
  p.a.reset();
  Frame f;
  EXPECT_EQ(p.b->recv(f).code(), Code::kUnavailable);
}

TEST(TcpConnection, AbortUnblocksAWaitingReceiver) {
  TcpPair p(7, 7, milliseconds(10000));
  Status s;
  std::thread waiter([&] {
    Frame f;
    s = p.b->recv(f);
  });
  std::this_thread::sleep_for(milliseconds(50));
  auto start = std::chrono::steady_clock::now();
  p.b->abort();
  waiter.join();
  EXPECT_FALSE(s.is_ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// One frame's bytes as a peer writes them.
std::string raw_frame(wire::FrameType type, uint64_t seq, const std::string& payload) {
  const wire::FrameHeader h = make_header(type, 7, 0, seq, payload.size());
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof(h));
  return bytes + payload;
}

// The loop reads past the frame in hand (the next headers, small frames,
// credits) in the same read: every byte must land in its own frame, in
// order, whether it came in that look-ahead or straight into a payload.
TEST(TcpConnection, FramesThatArriveTogetherAreEachDeliveredWhole) {
  RawPeer peer(7, milliseconds(5000));
  std::string big(100 << 10, '\0');  // longer than one read's look-ahead
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + 1);
  const std::vector<std::string> payloads = {"first", big, "", std::string(3000, 'x'), "last"};
  std::string stream;
  for (size_t i = 0; i < payloads.size(); ++i) {
    stream += raw_frame(wire::FrameType::kControl, i, payloads[i]);
    // A credit between frames is flow control, never delivered.
    if (i == 1) stream += raw_frame(wire::FrameType::kCredit, 0, "");
  }
  std::thread writer([&] {
    EXPECT_EQ(::send(peer.raw, stream.data(), stream.size(), MSG_NOSIGNAL), static_cast<ssize_t>(stream.size()));
  });
  for (size_t i = 0; i < payloads.size(); ++i) {
    Frame f;
    ASSERT_TRUE(peer.conn->recv(f).is_ok()) << "frame " << i;
    EXPECT_EQ(f.header.seq, i);
    EXPECT_EQ(std::string(f.payload.begin(), f.payload.end()), payloads[i]) << "frame " << i;
  }
  writer.join();
}

// A peer that sends a frame and hangs up at once: both are in the socket
// when the loop first looks, and the read that takes the frame comes back
// short. The hang-up must still be seen then, not at the timeout.
TEST(TcpConnection, AHangUpBehindTheLastFrameIsSeenAtOnce) {
  auto [raw, fd] = connected_sockets();
  const std::string bytes = raw_frame(wire::FrameType::kControl, 0, "bye");
  ASSERT_EQ(::send(raw, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  shutdown(raw, SHUT_WR);
  std::this_thread::sleep_for(milliseconds(20));  // the hang-up is in the socket too
  TcpConnection conn(fd, 0, 7, milliseconds(10000));
  Frame f;
  ASSERT_TRUE(conn.recv(f).is_ok());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(conn.recv(f).code(), Code::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  close(raw);
}

TEST(LocalConnection, DeliversInOrderWithoutWireBytes) {
  auto [a, b] = LocalConnection::make_pair(0, milliseconds(1000), 2);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(a->send_bytes(wire::FrameType::kBlocks, 0, i, &i, sizeof(i)).is_ok());
  // The queue is full: a third send waits, then times out.
  int three = 3;
  EXPECT_EQ(a->send_bytes(wire::FrameType::kBlocks, 0, 2, &three, 4).code(), Code::kTimeout);
  Frame f;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(b->recv(f).is_ok());
    EXPECT_EQ(f.header.seq, static_cast<uint64_t>(i));
  }
  EXPECT_FALSE(a->on_wire());
  EXPECT_EQ(a->counters().sent, 0u);
  EXPECT_EQ(b->recv(f).code(), Code::kTimeout);
}

TEST(LocalConnection, RecycledBuffersCarryExactlyTheNewPayload) {
  // Receiving into one Frame hands its old buffer back to the sender's pool;
  // sizes that grow and shrink must still arrive byte for byte.
  auto [a, b] = LocalConnection::make_pair(0, milliseconds(1000), 2);
  Frame f;
  for (size_t size : {size_t{300000}, size_t{17}, size_t{0}, size_t{500000}, size_t{4096}}) {
    std::vector<uint8_t> sent(size);
    for (size_t i = 0; i < size; ++i) sent[i] = static_cast<uint8_t>(i * 7 + size);
    ASSERT_TRUE(a->send_bytes(wire::FrameType::kBlocks, 0, size, sent.data(), sent.size()).is_ok());
    ASSERT_TRUE(b->recv(f).is_ok());
    EXPECT_EQ(f.header.length, size);
    EXPECT_TRUE(std::equal(f.payload.begin(), f.payload.end(), sent.begin(), sent.end())) << size;
  }
}

TEST(LocalConnection, AbortWakesBothEnds) {
  auto [a, b] = LocalConnection::make_pair(0, milliseconds(10000));
  Status s;
  std::thread waiter([&] {
    Frame f;
    s = b->recv(f);
  });
  std::this_thread::sleep_for(milliseconds(20));
  a->abort();
  waiter.join();
  EXPECT_EQ(s.code(), Code::kUnavailable);
}

TEST(SocketUtil, ParsesAddresses) {
  EXPECT_TRUE(parse_socket_address("127.0.0.1:80").is_ok());
  EXPECT_EQ(parse_socket_address("host:65535").value().port, 65535);
  EXPECT_FALSE(parse_socket_address("host").is_ok());
  EXPECT_FALSE(parse_socket_address("host:70000").is_ok());
  EXPECT_FALSE(parse_socket_address(":80").is_ok());
}

TEST(SocketUtil, DialGivesUpAtTheDeadline) {
  auto lfd = listen_on({"127.0.0.1", 0});
  auto addr = local_address(lfd.value()).value();
  close(lfd.value());  // nobody listens there now
  auto start = std::chrono::steady_clock::now();
  auto fd = dial(addr, start + milliseconds(300));
  EXPECT_EQ(fd.status().code(), Code::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace omnib
