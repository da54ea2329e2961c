// The loop of a lane that serves many links without blocking on any one of
// them: it steps every link's state (post what the send windows take, take
// what has arrived), and sleeps on one Waker only when nothing could move.
// So a rank needs a fixed number of lanes however many peers it has
// (docs/algorithms.md, "Lanes").
//
// Every sleep has a deadline: a lane fails when nothing moved for the
// timeout (a dead or silent peer), and the caller's failure handling
// (LaneGroup's on_failure: abort every link) stops the rank's other lanes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/trace/trace.h"
#include "engine/transport/waker.h"

namespace omnib {

// A lane gives up when nothing at all has moved for the timeout.
class Stall {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Stall(std::chrono::milliseconds timeout) : timeout_(timeout), since_(Clock::now()) {}
  void moved() { since_ = Clock::now(); }
  Clock::time_point deadline() const { return since_ + timeout_; }
  bool expired() const { return Clock::now() >= deadline(); }

 private:
  std::chrono::milliseconds timeout_;
  Clock::time_point since_;
};

// What one pass over a lane's links did.
struct LaneStep {
  bool moved = false;  // a frame was posted or taken, a send finished, work was done
  bool done = false;   // the lane's part of the call is over
  // Names the trace span of the wait that follows a pass that moved
  // nothing (a string literal).
  const char* waiting_for = "wait frame";
  trace::Args wait_args{};  // and its arguments (the shard that waits, say)
};

// Calls step() until it reports done. After a pass that moved nothing it
// waits on `waker`, which the lane's links (and the lanes it waits for)
// notify, until something happens or the deadline. `progress`, when not
// null, is shared by the rank's lanes: every move bumps it, and a lane
// whose own work waits on another lane is not stalled while that one
// moves. Fails with kTimeout and the message stalled() gives (it should
// name the peers still owed something) after `timeout` without a move;
// step()'s own errors are returned as they are. Runs on the calling thread.
Status run_link_lane(Waker& waker, std::chrono::milliseconds timeout, std::atomic<uint64_t>* progress,
                     const std::function<Result<LaneStep>()>& step, const std::function<std::string()>& stalled);

// "rank 3", "ranks 3, 5, 9" (at most `limit` named, then "and N more").
std::string name_ranks(const std::vector<int>& ranks, size_t limit = 8);

}  // namespace omnib
