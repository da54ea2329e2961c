// A fixed set of lanes that run one step of a collective together: lane 0
// on the calling thread, the others on persistent threads. Created once per
// collective so that an iteration costs a wake-up, not thread creation; lane
// 0 costs none (on a host with more busy threads than cores, a woken lane
// could wait milliseconds for a core while the caller's went idle).
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/base/status.h"
#include "engine/trace/trace.h"

namespace omnib {

class LaneGroup {
 public:
  explicit LaneGroup(int lanes);
  ~LaneGroup();
  LaneGroup(const LaneGroup&) = delete;
  LaneGroup& operator=(const LaneGroup&) = delete;

  // Runs body(lane) on lanes 0 to active - 1 (lane 0 here; active at most
  // size(), else an internal error) and waits for them; the other lanes'
  // threads are not woken (a call that needs fewer lanes than the group has
  // costs no wake-ups for the rest). When a lane
  // fails, on_failure runs once (it must unblock the other lanes, e.g. by
  // aborting connections) and the first failure is returned. Call from one
  // thread. Lane 0's trace spans go to a track of its own, as if it had its
  // own thread.
  Status run(int active, const std::function<Status(int lane)>& body, const std::function<void()>& on_failure);
  // Every lane.
  Status run(const std::function<Status(int lane)>& body, const std::function<void()>& on_failure) {
    return run(lanes_, body, on_failure);
  }

  int size() const { return lanes_; }

 private:
  void lane_main(int lane);
  // Records a lane's result; runs on_failure for the first failure.
  void finish(const Status& s);

  std::mutex mu_;
  std::vector<std::unique_ptr<std::condition_variable>> work_cvs_;  // one per lane: only active lanes wake
  std::condition_variable done_cv_;
  const std::function<Status(int)>* body_ = nullptr;
  const std::function<void()>* on_failure_ = nullptr;
  uint64_t generation_ = 0;
  int active_ = 0;  // lanes the current generation runs
  int remaining_ = 0;
  bool stopping_ = false;
  Status first_failure_;
  const int lanes_;
  std::unique_ptr<trace::Track> track_;  // lane 0's, made at its first traced run
  std::vector<std::thread> threads_;     // lanes 1 and up
};

}  // namespace omnib
