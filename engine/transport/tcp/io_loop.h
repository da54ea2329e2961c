// The thread that drives every socket of this process's links. Sockets are
// non-blocking; the loop waits for readiness (epoll) and calls each socket's
// owner back, so a rank runs one network thread however many peers and links
// it has, and a lane waiting on many links waits on one Waker.
//
// Handlers run on the loop thread and must not block. The loop lives as
// long as the process (it is started on first use and never stopped).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "engine/base/status.h"

namespace omnib {

class IoLoop {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // `events` are epoll events (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP).
    virtual void on_ready(uint32_t events) = 0;
  };

  static IoLoop& instance();

  // Watches `fd` for `events` (EPOLLIN and/or EPOLLOUT) on behalf of `h`.
  Status add(int fd, Handler* h, uint32_t events);
  // Changes what `fd` is watched for. Any thread.
  Status modify(int fd, Handler* h, uint32_t events);
  // Stops watching `fd`. When it returns, no call of its handler is running
  // or will start (from the loop thread itself: none after this event).
  void remove(int fd);

  bool in_loop_thread() const { return std::this_thread::get_id() == thread_id_; }

 private:
  IoLoop();
  void run();
  void wake();

  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: interrupts epoll_wait for remove()
  std::thread::id thread_id_;
  // remove() asks for a wake-up and waits until the loop has finished the
  // round that saw it: any earlier round, which may still name the removed
  // handler, is then over too.
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t wake_requests_ = 0;
  uint64_t wakes_done_ = 0;
};

}  // namespace omnib
