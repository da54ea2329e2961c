// -T bounds a whole wait, not each system call: a peer that trickles one
// byte at a time cannot stretch a store call or a frame past it.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "engine/bootstrap/tcp_store.h"
#include "engine/transport/tcp/tcp_connection.h"
#include "tests/support/store_peer.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A fake store that accepts one client and hands `serve` its connection;
// sends happen on a blocking socket.
class FakeStore {
 public:
  explicit FakeStore(std::function<void(int fd, const std::atomic<bool>& stop)> serve) {
    listen_fd_ = listen_on({"127.0.0.1", 0}).value();
    address_ = local_address(listen_fd_).value();
    thread_ = std::thread([this, serve = std::move(serve)] {
      auto fd = accept_before(listen_fd_, Clock::now() + std::chrono::seconds(10));
      if (!fd.is_ok()) return;
      testing::make_blocking(fd.value());
      serve(fd.value(), stop_);
      close(fd.value());
    });
  }
  ~FakeStore() {
    stop_ = true;
    thread_.join();
    close(listen_fd_);
  }
  SocketAddress address() const { return address_; }

 private:
  int listen_fd_;
  SocketAddress address_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Sends `bytes` one at a time, `gap` apart, until done or told to stop.
void trickle(int fd, const std::string& bytes, milliseconds gap, const std::atomic<bool>& stop) {
  for (char b : bytes) {
    if (stop || !testing::send_raw(fd, std::string(1, b))) return;
    std::this_thread::sleep_for(gap);
  }
}

std::string reply_bytes(const std::string& payload) {
  store_wire::StoreReply r{store_wire::kReplyMagic, 0, {0, 0, 0}, payload.size()};
  return std::string(reinterpret_cast<const char*>(&r), sizeof(r)) + payload;
}

TEST(Deadlines, AStoreThatTricklesItsReplyCannotStretchAGet) {
  FakeStore store([](int fd, const std::atomic<bool>& stop) {
    if (!testing::prove_as_server(fd, testing::test_token())) return;
    char request[sizeof(store_wire::StoreRequest) + 1];
    if (recv(fd, request, sizeof(request), MSG_WAITALL) != static_cast<ssize_t>(sizeof(request))) return;
    trickle(fd, reply_bytes(std::string(64, 'v')), milliseconds(300), stop);
  });
  auto client = TcpStoreClient::connect(store.address(), testing::test_token(), milliseconds(2000));
  ASSERT_TRUE(client.is_ok()) << client.status().message();
  const auto start = Clock::now();
  auto got = client.value()->get("k");
  EXPECT_EQ(got.status().code(), Code::kTimeout) << got.status().message();
  EXPECT_GT(seconds_since(start), 1.9);
  EXPECT_LT(seconds_since(start), 2.8);
}

TEST(Deadlines, AStoreThatTricklesItsGreetingCannotStretchConnect) {
  FakeStore store([](int fd, const std::atomic<bool>& stop) {
    trickle(fd, std::string(sizeof(store_wire::StoreGreeting), 'g'), milliseconds(200), stop);
  });
  const auto start = Clock::now();
  auto client = TcpStoreClient::connect(store.address(), testing::test_token(), milliseconds(1000));
  EXPECT_EQ(client.status().code(), Code::kTimeout) << client.status().message();
  EXPECT_LT(seconds_since(start), 1.8);
}

// One end a TcpConnection, the other a raw blocking socket.
struct HalfPair {
  std::unique_ptr<TcpConnection> conn;
  int raw = -1;
  explicit HalfPair(milliseconds timeout) {
    int lfd = listen_on({"127.0.0.1", 0}).value();
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    raw = dial(local_address(lfd).value(), deadline).value();
    int fd = accept_before(lfd, deadline).value();
    close(lfd);
    testing::make_blocking(raw);
    conn = std::make_unique<TcpConnection>(fd, 1, 7, timeout);
  }
  ~HalfPair() { close(raw); }
};

TEST(Deadlines, APeerThatTricklesAFrameCannotStretchAReceive) {
  HalfPair p(milliseconds(800));
  std::atomic<bool> stop{false};
  wire::FrameHeader h = make_header(wire::FrameType::kControl, 7, 0, 0, 100);
  std::thread peer([&] {
    trickle(p.raw, std::string(reinterpret_cast<const char*>(&h), sizeof(h)) + std::string(100, 'x'), milliseconds(50),
            stop);
  });
  const auto start = Clock::now();
  Frame f;
  Status s = p.conn->recv(f);
  stop = true;
  peer.join();
  EXPECT_EQ(s.code(), Code::kTimeout) << s.message();
  EXPECT_NE(s.message().find("bytes arrived"), std::string::npos) << s.message();
  EXPECT_GT(seconds_since(start), 0.75);
  EXPECT_LT(seconds_since(start), 1.5);
}

TEST(Deadlines, APeerThatStopsReadingCannotStretchASend) {
  HalfPair p(milliseconds(500));
  std::vector<uint8_t> big(64 << 20);
  const auto start = Clock::now();
  Status s = p.conn->send_bytes(wire::FrameType::kDense, 0, 0, big.data(), big.size());
  EXPECT_EQ(s.code(), Code::kTimeout) << s.message();
  EXPECT_LT(seconds_since(start), 1.5);
}

TEST(Deadlines, HugeTimeoutsSaturateInsteadOfOverflowing) {
  EXPECT_EQ(deadline_after(milliseconds::max()), Clock::time_point::max());
  EXPECT_GT(deadline_after(kMaxWaitTimeout), Clock::now() + std::chrono::hours(23));
  EXPECT_LT(deadline_after(milliseconds(0)), Clock::now() + milliseconds(1));
}

}  // namespace
}  // namespace omnib
