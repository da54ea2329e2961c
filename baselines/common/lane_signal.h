// How one lane of a baseline's call waits for another lane's progress
// (ring's sender for the frames its receiver has reduced, tree's down lane
// for its root's sums, allgather's sender for the frames it forwards): the
// state the lanes share changes under this lock, and a wait ends when its
// condition holds, when the call is aborted, or after the timeout, with an
// error that names what did not come.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "engine/base/status.h"

namespace omnib {

class LaneSignal {
 public:
  explicit LaneSignal(std::chrono::milliseconds timeout) : timeout_(timeout) {}

  // Runs `change` under the lock, then wakes every waiter.
  template <class Change>
  void update(Change&& change) {
    std::lock_guard lock(mu_);
    change();
    cv_.notify_all();
  }

  // Blocks until ready() holds; ready() runs under the lock, so it may also
  // copy out what it found. After the timeout: a timeout error saying
  // stalled(); once aborted: an unavailable error.
  Status wait(const std::function<bool()>& ready, const std::function<std::string()>& stalled) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout_, [&] { return aborted_ || ready(); })) return timeout_error(stalled());
    if (aborted_) return unavailable_error("aborted after another lane failed");
    return Status::ok();
  }

  // Wakes every waiter for good: every later wait fails at once.
  void abort() {
    update([this] { aborted_ = true; });
  }

 private:
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool aborted_ = false;
};

}  // namespace omnib
