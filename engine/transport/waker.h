// Lets one thread wait for "something changed" on any of several connections
// (a frame arrived, a send finished, a link failed) without a thread per
// connection. Connections call notify(); the waiting lane checks its
// connections with their non-blocking calls, then waits again.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace omnib {

class Waker {
 public:
  // Any thread, any time; cheap when nobody waits.
  void notify() {
    {
      std::lock_guard lock(mu_);
      ++events_;
    }
    cv_.notify_all();
  }

  // A mark of the events seen so far: take it before checking the
  // connections, then wait_since(mark), so that an event between the check
  // and the wait is never missed.
  uint64_t mark() {
    std::lock_guard lock(mu_);
    return events_;
  }

  // Returns once an event came after `mark`, or false at the deadline.
  bool wait_since(uint64_t mark, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, deadline, [&] { return events_ != mark; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t events_ = 0;
};

}  // namespace omnib
