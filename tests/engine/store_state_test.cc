// The store's contents without sockets: finished barriers and gathers leave
// nothing behind, so memory stays flat over any number of calls.
#include <gtest/gtest.h>

#include "engine/bootstrap/store_state.h"

namespace omnib {
namespace {

using store_wire::Op;
using store_wire::ReplyStatus;

using store_wire::make_request;

TEST(StoreState, AHundredThousandBarrierAndGatherRoundsLeaveNothingBehind) {
  StoreState state{StoreLimits{}};
  StoreState::Replies out;
  state.handle(1, make_request(Op::kSet), "addr/0", "127.0.0.1:1234", out);
  const StoreState::Counts start = state.counts();
  constexpr int kWorld = 3;
  for (int round = 0; round < 100000; ++round) {
    // Distinct names every round, as the harness uses them.
    const std::string name = "cfg" + std::to_string(round % 7) + "/" + std::to_string(round);
    out.clear();
    for (uint32_t r = 0; r < kWorld; ++r) state.handle(r + 1, make_request(Op::kBarrier, 0, kWorld), name, "", out);
    ASSERT_EQ(out.size(), size_t{kWorld});
    out.clear();
    for (uint32_t r = 0; r < kWorld; ++r)
      state.handle(r + 1, make_request(Op::kGather, r, kWorld, store_wire::kToRoot), name + "/results",
                   "{\"t\":[1.5,2.5],\"w\":0}", out);
    ASSERT_EQ(out.size(), size_t{kWorld});  // two at once, rank 0 when complete
    out.clear();
    for (uint32_t r = 0; r < kWorld; ++r)
      state.handle(r + 1, make_request(Op::kGather, r, kWorld, store_wire::kEveryone), name + "/all", "x", out);
    ASSERT_EQ(out.size(), size_t{kWorld});
    if (round % 10000 == 0 || round == 99999) {
      const StoreState::Counts now = state.counts();
      ASSERT_EQ(now.keys, start.keys) << "round " << round;
      ASSERT_EQ(now.value_bytes, start.value_bytes) << "round " << round;
      ASSERT_EQ(now.pending_collectives, 0u) << "round " << round;
      ASSERT_EQ(now.waiters, 0u) << "round " << round;
    }
  }
}

TEST(StoreState, GatherRepliesCarryEveryPartInRankOrder) {
  StoreState state{StoreLimits{}};
  StoreState::Replies out;
  state.handle(12, make_request(Op::kGather, 2, 3, store_wire::kToRoot), "g", "two", out);
  state.handle(10, make_request(Op::kGather, 0, 3, store_wire::kToRoot), "g", "zero", out);
  ASSERT_EQ(out.size(), 1u);  // rank 2 at once; rank 0 waits for rank 1
  EXPECT_EQ(out[0].to, 12u);
  state.handle(11, make_request(Op::kGather, 1, 3, store_wire::kToRoot), "g", "one", out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].to, 10u);
  EXPECT_EQ(store_wire::decode_parts(*out[2].payload, 3).value(), (std::vector<std::string>{"zero", "one", "two"}));
}

TEST(StoreState, BrokenRequestsAreRefusedAndChangeNothing) {
  StoreState state{StoreLimits{}};
  StoreState::Replies out;
  state.handle(1, make_request(Op::kGather, 5, 3), "g", "x", out);              // rank outside the world
  state.handle(1, make_request(Op::kBarrier, 0, 0), "b", "", out);              // no world
  state.handle(1, make_request(Op::kGather, 0, 2, 7), "g", "x", out);           // unknown mode
  state.handle(1, make_request(Op::kGather, 0, 2, store_wire::kEveryone), "h", "x", out);
  state.handle(2, make_request(Op::kGather, 0, 2, store_wire::kEveryone), "h", "y", out);  // rank 0 again
  ASSERT_EQ(out.size(), 4u);
  for (const auto& r : out) EXPECT_EQ(r.status, ReplyStatus::kRefused) << *r.payload;
  EXPECT_NE(out[3].payload->find("twice"), std::string::npos);
  EXPECT_EQ(state.counts().pending_collectives, 1u);  // only the valid start of "h"
}

TEST(StoreState, AnAbortEndsEveryWaitAndFreesWhatTheyHeld) {
  StoreState state{StoreLimits{}};
  StoreState::Replies out;
  state.handle(1, make_request(Op::kGet), "never", "", out);
  state.handle(2, make_request(Op::kBarrier, 0, 3), "b", "", out);
  state.handle(3, make_request(Op::kGather, 0, 2, store_wire::kEveryone), "g", std::string(1000, 'x'), out);
  EXPECT_TRUE(out.empty());
  state.abort(4, "rank 4's message", out);
  ASSERT_EQ(out.size(), 3u);
  for (const auto& r : out) {
    EXPECT_EQ(r.status, ReplyStatus::kAborted);
    EXPECT_EQ(*r.payload, "rank 4 failed: rank 4's message");
  }
  const auto counts = state.counts();
  EXPECT_EQ(counts.value_bytes, 0u);
  EXPECT_EQ(counts.waiters, 0u);
  EXPECT_EQ(counts.pending_collectives, 0u);
  out.clear();
  state.handle(5, make_request(Op::kSet), "k", "v", out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, ReplyStatus::kAborted);
}

TEST(StoreState, AClosedConnectionStopsWaitingButItsArrivalCounts) {
  StoreState state{StoreLimits{}};
  StoreState::Replies out;
  state.handle(1, make_request(Op::kBarrier, 0, 2), "b", "", out);
  state.handle(2, make_request(Op::kGet), "k", "", out);
  state.drop(1);
  state.drop(2);
  EXPECT_EQ(state.counts().waiters, 0u);
  state.handle(3, make_request(Op::kBarrier, 0, 2), "b", "", out);
  ASSERT_EQ(out.size(), 1u);  // the barrier completes; only the live caller hears of it
  EXPECT_EQ(out[0].to, 3u);
  EXPECT_EQ(state.counts().pending_collectives, 0u);
}

}  // namespace
}  // namespace omnib
