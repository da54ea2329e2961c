// The loop of a lane that serves many links: it must wake on an event, not
// at its deadline; fail after the timeout when nothing moves; stay alive
// while another lane of the rank moves; and pass a step's error on.
#include "engine/lanes/link_lane.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace omnib {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(LinkLane, WakesOnAnEventBeforeTheDeadline) {
  Waker waker;
  std::atomic<bool> ready{false};
  std::thread other([&] {
    std::this_thread::sleep_for(milliseconds(50));
    ready = true;
    waker.notify();
  });
  const auto start = Clock::now();
  const Status s = run_link_lane(
      waker, std::chrono::seconds(30), nullptr, [&]() -> Result<LaneStep> { return LaneStep{false, ready.load()}; },
      [] { return std::string("stalled"); });
  other.join();
  EXPECT_TRUE(s.is_ok()) << s.message();
  EXPECT_LT(seconds_since(start), 10.0);
}

TEST(LinkLane, FailsWithTheStallMessageWhenNothingMoves) {
  Waker waker;
  int steps = 0;
  const auto start = Clock::now();
  const Status s = run_link_lane(
      waker, milliseconds(200), nullptr,
      [&]() -> Result<LaneStep> {
        ++steps;
        return LaneStep{};
      },
      [] { return std::string("nothing from rank 7"); });
  EXPECT_EQ(s.code(), Code::kTimeout);
  EXPECT_NE(s.message().find("nothing from rank 7"), std::string::npos) << s.message();
  EXPECT_GE(seconds_since(start), 0.2);
  EXPECT_LT(steps, 100) << "the lane spun instead of sleeping";
}

TEST(LinkLane, MovesOfAnotherLaneKeepItAlive) {
  Waker waker;
  std::atomic<uint64_t> progress{0};
  std::atomic<bool> ready{false};
  // The other lane moves every 20 ms for six of this lane's timeouts (a
  // timeout of 12 moves: a loaded machine may hold a thread back a while).
  std::thread other([&] {
    for (int i = 0; i < 75; ++i) {
      std::this_thread::sleep_for(milliseconds(20));
      ++progress;
    }
    ready = true;
    waker.notify();
  });
  const Status s = run_link_lane(
      waker, milliseconds(250), &progress, [&]() -> Result<LaneStep> { return LaneStep{false, ready.load()}; },
      [] { return std::string("stalled"); });
  other.join();
  EXPECT_TRUE(s.is_ok()) << s.message();
}

TEST(LinkLane, MovesCountAsProgressForOtherLanes) {
  Waker waker;
  std::atomic<uint64_t> progress{0};
  int steps = 0;
  const Status s = run_link_lane(
      waker, milliseconds(100), &progress,
      [&]() -> Result<LaneStep> {
        ++steps;
        return LaneStep{true, steps == 5};
      },
      [] { return std::string("stalled"); });
  EXPECT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(progress.load(), 4u);
}

TEST(LinkLane, PassesAStepsErrorOn) {
  Waker waker;
  const Status s = run_link_lane(
      waker, std::chrono::seconds(30), nullptr,
      []() -> Result<LaneStep> { return unavailable_error("rank 3 closed the link"); },
      [] { return std::string("stalled"); });
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_NE(s.message().find("rank 3"), std::string::npos);
}

TEST(LinkLane, NamesRanks) {
  EXPECT_EQ(name_ranks({4}), "rank 4");
  EXPECT_EQ(name_ranks({1, 2, 3}), "ranks 1, 2, 3");
  EXPECT_EQ(name_ranks({1, 2, 3, 4}, 2), "ranks 1, 2 and 2 more");
}

}  // namespace
}  // namespace omnib
