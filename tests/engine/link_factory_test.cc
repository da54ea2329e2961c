// Link set-up with strangers at the door: ranks as threads in one process,
// meeting through a real store; the test connects to a rank's link port the
// way anyone on the machine could (its address is in the store).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <future>
#include <thread>

#include "engine/bootstrap/tcp_store.h"
#include "engine/links/link_factory.h"
#include "tests/support/store_peer.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
constexpr uint32_t kJob = 77;

struct Job {
  std::unique_ptr<TcpStoreServer> server = TcpStoreServer::start({"127.0.0.1", 0}, testing::test_token()).take();
  std::unique_ptr<TcpStoreClient> client() {
    return TcpStoreClient::connect(server->address(), testing::test_token(), milliseconds(5000)).take();
  }
};

struct Rank {
  std::unique_ptr<TcpStoreClient> store;
  std::unique_ptr<LinkFactory> links;
  Rank(Job& job, int rank, milliseconds timeout) : store(job.client()) {
    auto f = LinkFactory::start(*store, rank, 2, kJob, testing::test_token(), "127.0.0.1", timeout);
    EXPECT_TRUE(f.is_ok()) << f.status().message();
    links = f.take();
  }
};

Nonce read_challenge(int fd) {
  char buf[sizeof(wire::FrameHeader) + sizeof(wire::ChallengePayload)];
  EXPECT_EQ(recv(fd, buf, sizeof(buf), MSG_WAITALL), static_cast<ssize_t>(sizeof(buf)));
  Nonce n{};
  std::memcpy(n.data(), buf + sizeof(wire::FrameHeader), n.size());
  return n;
}

// Over a two-way link plan ({0,1}, {1,0}) each rank sends its number to the
// other and receives the other's.
void expect_working(LinkSet& rank0, LinkSet& rank1) {
  LinkSet* sets[2] = {&rank0, &rank1};
  for (int r = 0; r < 2; ++r) {
    auto& out = sets[r]->dialer_end[static_cast<size_t>(r)];
    ASSERT_TRUE(out);
    EXPECT_TRUE(out->send_bytes(wire::FrameType::kControl, 0, 0, &r, sizeof(r)).is_ok());
  }
  for (int r = 0; r < 2; ++r) {
    auto& in = sets[r]->acceptor_end[static_cast<size_t>(1 - r)];
    ASSERT_TRUE(in);
    Frame f;
    ASSERT_TRUE(in->recv(f).is_ok());
    int from = -1;
    std::memcpy(&from, f.payload.data(), sizeof(from));
    EXPECT_EQ(from, 1 - r);
  }
}

TEST(LinkFactory, StrangersAtTheLinkPortDoNotEndSetUp) {
  Job job;
  Rank r0(job, 0, milliseconds(3000)), r1(job, 1, milliseconds(3000));
  auto watcher = job.client();
  const SocketAddress port1 = parse_socket_address(watcher->get("addr/1").value()).value();
  auto stranger = [&] { return testing::raw_connect(port1); };
  const int wrong_job = stranger(), random_bytes = stranger(), wrong_token = stranger(), silent = stranger(),
            half_header = stranger();
  std::thread strangers([&] {
    Nonce n = read_challenge(wrong_job);
    testing::send_raw(wrong_job, hello_frame(testing::test_token(), {kJob + 1, 0, 0, 0}, 1, n));
    testing::send_raw(random_bytes, std::string("\x13\x37 definitely not a frame header, nor a hello \xff\xfe", 50));
    n = read_challenge(wrong_token);
    testing::send_raw(wrong_token, hello_frame(testing::other_token(), {kJob, 0, 0, 0}, 1, n));
    read_challenge(half_header);
    testing::send_raw(half_header, std::string(10, '\0'));
  });
  const std::vector<LinkSpec> plan = {{0, 1}, {1, 0}};
  ::testing::internal::CaptureStderr();
  const auto start = Clock::now();
  auto other = std::async(std::launch::async, [&] { return r0.links->establish(plan); });
  auto mine = r1.links->establish(plan);
  auto theirs = other.get();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  strangers.join();
  ASSERT_TRUE(mine.is_ok()) << mine.status().message();
  ASSERT_TRUE(theirs.is_ok()) << theirs.status().message();
  EXPECT_LT(seconds, 2.0) << "a silent stranger held up set-up";
  expect_working(theirs.value(), mine.value());
  // The silent and half-sent ones are still pending; a later plan is not held up by them.
  auto next = std::async(std::launch::async, [&] { return r0.links->establish(plan); });
  ASSERT_TRUE(r1.links->establish(plan).is_ok());
  ASSERT_TRUE(next.get().is_ok());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r1.links->rejected_connections(), 3u);
  for (int fd : {wrong_job, random_bytes, wrong_token}) EXPECT_TRUE(testing::closed_by_peer(fd, milliseconds(2000)));
  size_t logged = 0;
  for (size_t at = err.find("closed a connection to its link port"); at != std::string::npos;
       at = err.find("closed a connection to its link port", at + 1))
    ++logged;
  EXPECT_EQ(logged, 1u) << err;
  for (int fd : {wrong_job, random_bytes, wrong_token, silent, half_header}) close(fd);
}

// A hello for a later plan is kept until that plan is built, and then it must
// come from the plan's dialer.
TEST(LinkFactory, EarlyArrivalsMustComeFromThePlansDialer) {
  Job job;
  Rank r0(job, 0, milliseconds(2000)), r1(job, 1, milliseconds(2000));
  auto watcher = job.client();
  const SocketAddress port1 = parse_socket_address(watcher->get("addr/1").value()).value();
  const int forged = testing::raw_connect(port1);
  std::thread forger([&] {
    // Knows the token and the job id, and claims to be rank 0 dialing link 0 of plan 1.
    Nonce n = read_challenge(forged);
    testing::send_raw(forged, hello_frame(testing::test_token(), {kJob, 1, 0, 0}, 1, n));
  });
  const std::vector<LinkSpec> first = {{0, 1}};
  auto other = std::async(std::launch::async, [&] { return r0.links->establish(first); });
  ASSERT_TRUE(r1.links->establish(first).is_ok());
  ASSERT_TRUE(other.get().is_ok());
  forger.join();
  // Plan 1's link 0 is dialed by rank 2, which never comes: the forged
  // connection must not stand in for it.
  auto second = r1.links->establish({{2, 1}});
  EXPECT_EQ(second.status().code(), Code::kUnavailable) << second.status().message();
  EXPECT_NE(second.status().message().find("unexpected link 0 from rank 0"), std::string::npos)
      << second.status().message();
  close(forged);
}

TEST(LinkFactory, APeerThatNeverComesIsATimeoutNamingIt) {
  Job job;
  Rank r1(job, 1, milliseconds(500));
  const auto start = Clock::now();
  auto set = r1.links->establish({{0, 1}});
  EXPECT_EQ(set.status().code(), Code::kTimeout);
  EXPECT_NE(set.status().message().find("no hello from rank(s) 0"), std::string::npos) << set.status().message();
  EXPECT_LT(Clock::now() - start, milliseconds(1500));
}

}  // namespace
}  // namespace omnib
