// The rendezvous store through its public API: what ranks see.
#include <gtest/gtest.h>

#include <thread>

#include "engine/bootstrap/tcp_store.h"
#include "tests/support/store_peer.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

using testing::test_token;

struct Served {
  std::unique_ptr<TcpStoreServer> server = TcpStoreServer::start({"127.0.0.1", 0}, test_token()).take();
  std::unique_ptr<TcpStoreClient> client(milliseconds timeout = milliseconds(5000)) {
    auto c = TcpStoreClient::connect(server->address(), test_token(), timeout);
    EXPECT_TRUE(c.is_ok()) << c.status().message();
    return c.take();
  }
};

TEST(TcpStore, SetGetAndWait) {
  Served s;
  auto a = s.client(), b = s.client();
  std::thread late([&] {
    std::this_thread::sleep_for(milliseconds(50));
    EXPECT_TRUE(a->set("k", std::string("v\0w", 3)).is_ok());
  });
  auto v = b->get("k");  // waits for the set
  late.join();
  ASSERT_TRUE(v.is_ok());
  EXPECT_EQ(v.value(), std::string("v\0w", 3));
  EXPECT_TRUE(a->set("k", "again").is_ok());
  EXPECT_EQ(b->get("k").value(), "again");
  EXPECT_EQ(s.server->stats().keys, 1u);
}

TEST(TcpStore, GetOfAMissingKeyTimesOutAndTheClientRecovers) {
  Served s;
  auto c = s.client(milliseconds(200));
  auto start = Clock::now();
  EXPECT_EQ(c->get("never").status().code(), Code::kTimeout);
  EXPECT_LT(Clock::now() - start, milliseconds(1500));
  // The timed-out wait dropped its connection; the next call opens another.
  EXPECT_TRUE(c->set("k", "v").is_ok());
  EXPECT_EQ(c->get("k").value(), "v");
}

TEST(TcpStore, BarrierAndGathers) {
  Served s;
  constexpr int kWorld = 4;
  std::vector<std::vector<std::string>> gathered(kWorld), rooted(kWorld);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kWorld; ++r) {
    ranks.emplace_back([&, r] {
      auto c = s.client();
      for (int round = 0; round < 3; ++round)
        ASSERT_TRUE(store_barrier(*c, "b" + std::to_string(round), kWorld).is_ok());
      gathered[r] = store_all_gather(*c, "g", r, kWorld, "rank" + std::to_string(r)).take();
      rooted[r] = store_gather_to_root(*c, "h", r, kWorld, std::to_string(r * r)).take();
      // A name may be used again once the gather finished everywhere.
      ASSERT_TRUE(store_barrier(*c, "reuse", kWorld).is_ok());
      EXPECT_EQ(store_all_gather(*c, "g", r, kWorld, "x").value().size(), size_t{kWorld});
      EXPECT_TRUE(measure_barrier_latency_us(*c, "latency", kWorld, 3).value() > 0);
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_EQ(gathered[r], (std::vector<std::string>{"rank0", "rank1", "rank2", "rank3"}));
    EXPECT_EQ(rooted[r].size(), r == 0 ? 4u : 0u);
  }
  EXPECT_EQ(rooted[0][3], "9");
  const StoreStats st = s.server->stats();
  EXPECT_EQ(st.pending_collectives, 0u);
  EXPECT_EQ(st.value_bytes, 0u);
}

TEST(TcpStore, RanksThatDisagreeOnTheWorldAreRefused) {
  Served s;
  auto a = s.client(milliseconds(800)), b = s.client(milliseconds(800));
  std::thread first([&] { EXPECT_EQ(a->barrier("b", 2).code(), Code::kTimeout); });
  std::this_thread::sleep_for(milliseconds(100));
  Status other = b->barrier("b", 3);
  EXPECT_EQ(other.code(), Code::kUsage);
  EXPECT_NE(other.message().find("world"), std::string::npos) << other.message();
  first.join();
}

TEST(TcpStore, OversizedValuesAreRefusedBeforeSending) {
  Served s;
  auto c = s.client();
  Status big = c->set("k", std::string((64u << 20) + 1, 'x'));
  EXPECT_EQ(big.code(), Code::kUsage);
  EXPECT_TRUE(c->set("k", "small").is_ok());
}

TEST(TcpStore, ClientsWithAnotherTokenAreTurnedAway) {
  Served s;
  auto c = TcpStoreClient::connect(s.server->address(), testing::other_token(), milliseconds(2000));
  EXPECT_EQ(c.status().code(), Code::kUnavailable);
  EXPECT_NE(c.status().message().find("OMNIB_JOB_TOKEN"), std::string::npos) << c.status().message();
  auto unauthenticated = TcpStoreClient::connect(s.server->address(), JobToken::unauthenticated(), milliseconds(2000));
  EXPECT_FALSE(unauthenticated.is_ok());
  EXPECT_TRUE(testing::eventually([&] { return s.server->stats().connections_rejected == 2; }, milliseconds(2000)));
}

TEST(TcpStore, ConnectGivesUpWhenNoServer) {
  SocketAddress addr;
  {
    Served s;
    addr = s.server->address();
  }
  auto start = Clock::now();
  auto c = TcpStoreClient::connect(addr, test_token(), milliseconds(300));
  // Under a parallel suite another test's store may take the freed port: it
  // then refuses this client's token (unavailable) instead of not answering.
  EXPECT_TRUE(c.status().code() == Code::kTimeout || c.status().code() == Code::kUnavailable) << c.status().message();
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

// A failure posted by one rank ends every wait of the others at once, and
// every later one; the first failure posted is the one reported.
TEST(TcpStore, APostedFailureEndsEveryWait) {
  Served s;
  auto waiting_get = s.client(milliseconds(20000)), waiting_barrier = s.client(milliseconds(20000));
  auto failing = s.client(milliseconds(20000));
  Status got, barred;
  auto start = Clock::now();
  std::thread t1([&] { got = waiting_get->get("never").status(); });
  std::thread t2([&] { barred = waiting_barrier->barrier("b", 3); });
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_TRUE(failing->post_abort(2, "cannot write -J out.json").is_ok());
  EXPECT_TRUE(failing->post_abort(1, "an echo").is_ok());
  t1.join();
  t2.join();
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  for (const Status& st : {got, barred}) {
    EXPECT_EQ(st.code(), Code::kUnavailable);
    EXPECT_NE(st.message().find("rank 2 failed: cannot write -J out.json"), std::string::npos) << st.message();
  }
  auto later = waiting_get->gather("g", 0, 2, "x", GatherTo::kEveryone);
  EXPECT_EQ(later.status().code(), Code::kUnavailable);
  EXPECT_EQ(s.server->stats().waiters, 0u);
}

TEST(TcpStore, TheHostCanPostAFailureToo) {
  Served s;
  auto c = s.client(milliseconds(20000));
  Status got;
  std::thread waiter([&] { got = c->barrier("b", 2); });
  std::this_thread::sleep_for(milliseconds(100));
  s.server->post_abort(1, "was killed by signal 9 (Killed)");
  waiter.join();
  EXPECT_EQ(got.code(), Code::kUnavailable);
  EXPECT_NE(got.message().find("rank 1 failed: was killed by signal 9"), std::string::npos) << got.message();
}

TEST(TcpStore, PostingWhileAnotherThreadWaitsUsesItsOwnConnection) {
  Served s;
  auto c = s.client(milliseconds(20000));
  Status got;
  std::thread waiter([&] { got = c->get("never").status(); });
  std::this_thread::sleep_for(milliseconds(100));
  auto start = Clock::now();
  EXPECT_TRUE(c->post_abort(0, "failed").is_ok());
  waiter.join();
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  EXPECT_EQ(got.code(), Code::kUnavailable);
}

}  // namespace
}  // namespace omnib
