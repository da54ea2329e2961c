// The TCP reader's receive low-water mark: once the socket is empty inside a
// frame, the loop asks to be woken only when the frame can be finished, and
// between frames when a header can be read (tcp_frame_reader.h).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/transport/connection_core.h"
#include "engine/transport/tcp/tcp_frame_reader.h"
#include "tests/support/tcp_pair.h"

namespace omnib {
namespace {

constexpr uint32_t kJob = 7;
constexpr size_t kHeader = sizeof(wire::FrameHeader);

struct NoHooks : ConnectionCore::Hooks {
  void frame_taken_locked(size_t) override {}
  std::string partial_frame_locked() const override { return ""; }
  void windows_changed_locked() override {}
};

struct NoCredits : TcpFrameReader::CreditSink {
  Status take_credit_locked(const wire::FrameHeader&) override { return Status::ok(); }
};

// A reader on one end of a loopback connection (its peer is rank 0), and
// the raw socket of the other end to write bytes into it.
class LowWater : public ::testing::Test {
 protected:
  ~LowWater() override {
    close(raw_);
    close(fd_);
  }

  void write_all(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::send(raw_, p, n, MSG_NOSIGNAL);
      ASSERT_GT(w, 0);
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  // Reads what has arrived (loopback delivers within the send call, but a
  // short pause keeps the test from depending on it).
  void read_available() {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard lock(core_.mu());
    reader_.read_available_locked(SIZE_MAX);
    if (core_.failed_locked()) ADD_FAILURE() << core_.failure_locked().message();
  }
  int low_water() const {
    int v = 0;
    socklen_t len = sizeof(v);
    EXPECT_EQ(getsockopt(fd_, SOL_SOCKET, SO_RCVLOWAT, &v, &len), 0);
    return v;
  }
  size_t delivered() {
    std::lock_guard lock(core_.mu());
    return core_.inbox_size_locked();
  }

  // Declared first: the reader below is built on fd_.
  const std::pair<int, int> sockets_ = connected_sockets();
  const int raw_ = sockets_.first;
  const int fd_ = sockets_.second;
  NoHooks hooks_;
  NoCredits credits_;
  ConnectionCore core_{hooks_, "test link", 0, kJob, std::chrono::milliseconds(5000)};
  TcpFrameReader reader_{fd_, core_, credits_};
};

TEST_F(LowWater, InsideAFrameTheMarkIsWhatTheFrameLacks) {
  const size_t payload = 20000;
  const wire::FrameHeader h = make_header(wire::FrameType::kControl, kJob, 1, 0, payload);
  const std::vector<char> bytes(payload, 'x');
  write_all(&h, kHeader);
  write_all(bytes.data(), 5000);
  read_available();
  EXPECT_EQ(delivered(), 0u);
  EXPECT_EQ(low_water(), static_cast<int>(payload - 5000));

  write_all(bytes.data() + 5000, payload - 5000);
  read_available();
  EXPECT_EQ(delivered(), 1u);
  // Between frames only a header is sure to come.
  EXPECT_EQ(low_water(), static_cast<int>(kHeader));
}

TEST_F(LowWater, AHalfHeaderAsksForTheRestOfIt) {
  const wire::FrameHeader h = make_header(wire::FrameType::kControl, kJob, 1, 0, 100);
  write_all(&h, 10);
  read_available();
  EXPECT_EQ(low_water(), static_cast<int>(kHeader - 10));
}

TEST_F(LowWater, ALongFrameStillWakesTheLoopEvery256KiB) {
  const size_t payload = 4 << 20;
  const wire::FrameHeader h = make_header(wire::FrameType::kControl, kJob, 1, 0, payload);
  write_all(&h, kHeader);
  const std::vector<char> bytes(1000, 'x');
  write_all(bytes.data(), bytes.size());
  read_available();
  EXPECT_EQ(low_water(), 256 << 10);
}

}  // namespace
}  // namespace omnib
