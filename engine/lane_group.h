// A fixed set of persistent threads ("lanes") that run one step of a
// collective together. Created once per collective so that an iteration costs
// a wake-up, not thread creation.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/status.h"

namespace omnib {

class LaneGroup {
 public:
  explicit LaneGroup(int lanes);
  ~LaneGroup();
  LaneGroup(const LaneGroup&) = delete;
  LaneGroup& operator=(const LaneGroup&) = delete;

  // Runs body(lane) on every lane and waits for all. When a lane fails,
  // on_failure runs once (it must unblock the other lanes, e.g. by aborting
  // connections) and the first failure is returned. Call from one thread.
  Status run(const std::function<Status(int lane)>& body, const std::function<void()>& on_failure);

  int size() const { return static_cast<int>(threads_.size()); }

 private:
  void lane_main(int lane);

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const std::function<Status(int)>* body_ = nullptr;
  const std::function<void()>* on_failure_ = nullptr;
  uint64_t generation_ = 0;
  int remaining_ = 0;
  bool stopping_ = false;
  Status first_failure_;
  std::vector<std::thread> threads_;
};

}  // namespace omnib
