// LaneGroup: every lane (or every active one, the others staying asleep)
// runs once per call, lane 0 on the calling thread (no wake-up to wait
// for), a failure on any lane stops the others through on_failure, and lane
// 0's trace spans keep a track of their own.
#include "engine/lanes/lane_group.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/trace/trace_recorder.h"

namespace omnib {
namespace {

TEST(LaneGroup, EveryLaneRunsOnceAndLaneZeroOnTheCaller) {
  LaneGroup lanes(3);
  EXPECT_EQ(lanes.size(), 3);
  for (int call = 0; call < 3; ++call) {
    std::mutex mu;
    std::vector<int> ran;
    std::vector<std::thread::id> on(3);
    const std::function<Status(int)> body = [&](int lane) {
      std::lock_guard lock(mu);
      ran.push_back(lane);
      on[static_cast<size_t>(lane)] = std::this_thread::get_id();
      return Status::ok();
    };
    const std::function<void()> on_failure = [] { ADD_FAILURE() << "no lane failed"; };
    ASSERT_TRUE(lanes.run(body, on_failure).is_ok());
    EXPECT_EQ(std::multiset<int>(ran.begin(), ran.end()), (std::multiset<int>{0, 1, 2}));
    EXPECT_EQ(on[0], std::this_thread::get_id());
    EXPECT_NE(on[1], std::this_thread::get_id());
    EXPECT_NE(on[2], std::this_thread::get_id());
    EXPECT_NE(on[1], on[2]);
  }
}

// The context switches a process's thread named `name` made while it
// waited (/proc/self/task/*/status), or -1 when no thread has that name.
long voluntary_switches_of(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (!std::getline(comm, line) || line != name) continue;
    std::ifstream status(task.path() / "status");
    while (std::getline(status, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  }
  return -1;
}

// A call that uses fewer lanes leaves the others' threads asleep: the
// direct route needs two of a shard's three lanes, and a woken idle lane
// costs a wake-up on both ends of every call.
TEST(LaneGroup, LanesBeyondTheActiveOnesStayAsleep) {
  LaneGroup lanes(3);
  std::mutex mu;
  std::vector<int> ran;
  const std::function<Status(int)> body = [&](int lane) {
    std::lock_guard lock(mu);
    ran.push_back(lane);
    return Status::ok();
  };
  const std::function<void()> on_failure = [] { ADD_FAILURE() << "no lane failed"; };
  ASSERT_TRUE(lanes.run(body, on_failure).is_ok());  // every lane once: all threads are up and named
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // and back asleep
  const long before = voluntary_switches_of("omnib lane 2");
  ASSERT_GE(before, 0) << "no thread named 'omnib lane 2'";
  ran.clear();
  for (int call = 0; call < 50; ++call) ASSERT_TRUE(lanes.run(2, body, on_failure).is_ok());
  EXPECT_EQ(std::count(ran.begin(), ran.end(), 2), 0);
  EXPECT_EQ(std::count(ran.begin(), ran.end(), 1), 50);
  EXPECT_EQ(voluntary_switches_of("omnib lane 2"), before) << "lane 2 was woken by calls that did not need it";
  ran.clear();
  ASSERT_TRUE(lanes.run(body, on_failure).is_ok());  // and it still runs when needed
  EXPECT_EQ(std::multiset<int>(ran.begin(), ran.end()), (std::multiset<int>{0, 1, 2}));
}

// Asking for more lanes than the group has is a caller's bug: it must not
// quietly drop the roles past the last lane.
TEST(LaneGroup, MoreLanesThanTheGroupHasIsAnError) {
  LaneGroup lanes(2);
  int ran = 0;
  const std::function<Status(int)> body = [&](int) {
    ++ran;
    return Status::ok();
  };
  const Status s = lanes.run(3, body, [] {});
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("3 lanes of a group of 2"), std::string::npos) << s.message();
  EXPECT_EQ(ran, 0);
}

TEST(LaneGroup, NoLanesRunNothing) {
  LaneGroup lanes(0);
  const std::function<Status(int)> body = [](int) -> Status {
    ADD_FAILURE() << "no lane to run";
    return Status::ok();
  };
  EXPECT_TRUE(lanes.run(body, [] {}).is_ok());
}

// Lane 0 fails at once while lane 1 waits for the abort: on_failure runs
// once, lane 1 returns, and the call returns lane 0's failure.
TEST(LaneGroup, AFailingLaneZeroAbortsTheOthers) {
  LaneGroup lanes(2);
  std::atomic<bool> aborted{false};
  std::atomic<int> failures{0};
  const std::function<Status(int)> body = [&](int lane) -> Status {
    if (lane == 0) return unavailable_error("lane 0 broke");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!aborted && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return aborted ? unavailable_error("aborted") : Status::ok();
  };
  const std::function<void()> on_failure = [&] {
    ++failures;
    aborted = true;
  };
  const Status s = lanes.run(body, on_failure);
  EXPECT_EQ(s.message(), "lane 0 broke");
  EXPECT_EQ(failures, 1);
}

// Spans lane 0 records while running on the caller land on a track named
// by the lane, not on the caller's own (the harness's track in a run).
TEST(LaneGroup, LaneZeroTracesOnATrackOfItsOwn) {
  LaneGroup lanes(2);
  trace::Recorder::drain();
  trace::Recorder::set_recording(true);
  trace::name_thread("caller");
  const int64_t t = trace::now_ns();
  trace::record("before", trace::Kind::kCompute, t, t);
  const std::function<Status(int)> body = [](int lane) {
    trace::name_thread(lane == 0 ? "lane zero" : "lane one");
    const int64_t now = trace::now_ns();
    trace::record(lane == 0 ? "zero's span" : "one's span", trace::Kind::kCompute, now, now);
    return Status::ok();
  };
  ASSERT_TRUE(lanes.run(body, [] {}).is_ok());
  trace::record("after", trace::Kind::kCompute, t, t);
  trace::Recorder::set_recording(false);
  const trace::Drained drained = trace::Recorder::drain();
  std::map<std::string, std::vector<std::string>> spans_by_track;
  for (const auto& thread : drained.threads)
    for (const auto& e : thread.events) spans_by_track[thread.name].push_back(e.name);
  EXPECT_EQ(spans_by_track["caller"], (std::vector<std::string>{"before", "after"}));
  EXPECT_EQ(spans_by_track["lane zero"], (std::vector<std::string>{"zero's span"}));
  EXPECT_EQ(spans_by_track["lane one"], (std::vector<std::string>{"one's span"}));
}

}  // namespace
}  // namespace omnib
