// How --duration paces its batches, and that every rank gets rank 0's batch.
#include "tools/measure/duration_pacer.h"

#include <gtest/gtest.h>

#include <thread>

#include "engine/bootstrap/tcp_store.h"
#include "tests/support/store_peer.h"

namespace omnib {
namespace {

using namespace std::chrono_literals;
using Clock = DurationPacer::Clock;

TEST(DurationPacer, StartsWithOneRoundAndAtMostDoubles) {
  const auto t0 = Clock::now();
  DurationPacer pacer(10s, t0);
  std::vector<uint64_t> batches;
  auto now = t0;
  for (int i = 0; i < 12; ++i) {
    batches.push_back(pacer.propose(now));
    now += 100us * batches.back();  // rounds of 100 us
  }
  EXPECT_EQ(batches[0], 1u);
  for (size_t i = 1; i < batches.size(); ++i) EXPECT_LE(batches[i], 2 * batches[i - 1]);
  EXPECT_EQ(batches.back(), DurationPacer::kMaxBatchRounds);
}

TEST(DurationPacer, StopsWhenTheBudgetIsSpentAndOvershootsByAboutOneRound) {
  const auto t0 = Clock::now();
  DurationPacer pacer(1s, t0);
  auto now = t0;
  const auto round = 3ms;
  for (;;) {
    const uint64_t n = pacer.propose(now);
    if (n == 0) break;
    now += round * n;
    ASSERT_LT(now - t0, 10s) << "never stopped";
  }
  EXPECT_GE(now - t0, 1s);
  EXPECT_LE(now - t0, 1s + 2 * round);
}

TEST(DurationPacer, BatchesLastAtMostAboutASecond) {
  const auto t0 = Clock::now();
  DurationPacer pacer(1h, t0);
  auto now = t0;
  for (int i = 0; i < 20; ++i) {
    const uint64_t n = pacer.propose(now);
    EXPECT_LE(50ms * n, DurationPacer::kMaxBatchTime + 50ms) << "batch " << i;
    now += 50ms * n;
  }
}

TEST(DurationPacer, AlwaysAtLeastOneRound) {
  const auto t0 = Clock::now();
  DurationPacer pacer(1ms, t0);
  EXPECT_EQ(pacer.propose(t0 + 1s), 1u);  // late, but a run makes a round
  EXPECT_EQ(pacer.propose(t0 + 2s), 0u);
}

TEST(DurationPacer, EveryRankGetsRankZerosBatch) {
  auto server = TcpStoreServer::start({"127.0.0.1", 0}, testing::test_token()).take();
  constexpr int kWorld = 4;
  std::vector<uint64_t> got(kWorld, 999);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kWorld; ++r)
    ranks.emplace_back([&, r] {
      auto store = TcpStoreClient::connect(server->address(), testing::test_token(), 5000ms).take();
      // The others propose nonsense: only rank 0's counts.
      auto n = agree_on_batch(*store, "pace/0", r, kWorld, r == 0 ? 17 : 100 + r);
      EXPECT_TRUE(n.is_ok()) << n.status().message();
      if (n.is_ok()) got[r] = n.value();
    });
  for (auto& t : ranks) t.join();
  EXPECT_EQ(got, std::vector<uint64_t>(kWorld, 17));
  EXPECT_EQ(server->stats().pending_collectives, 0u);
}

TEST(DurationPacer, AMalformedBatchIsAnInternalError) {
  auto server = TcpStoreServer::start({"127.0.0.1", 0}, testing::test_token()).take();
  auto store = TcpStoreClient::connect(server->address(), testing::test_token(), 5000ms).take();
  auto n = agree_on_batch(*store, "pace/0", 0, 1, DurationPacer::kMaxBatchRounds + 1);
  ASSERT_FALSE(n.is_ok());
  EXPECT_EQ(n.status().code(), Code::kInternal);
  EXPECT_NE(n.status().message().find("gather/pace/0/0"), std::string::npos) << n.status().message();
}

}  // namespace
}  // namespace omnib
