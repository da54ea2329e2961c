#include "engine/transport/tcp/io_loop.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "engine/transport/transport_cpu.h"

namespace omnib {

IoLoop& IoLoop::instance() {
  // Never destroyed: handlers of links that outlive static destruction must
  // still find it, and the thread ends with the process.
  static IoLoop* loop = new IoLoop();
  return *loop;
}

IoLoop::IoLoop() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // the wake-up
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  std::thread t([this] { run(); });
  thread_id_ = t.get_id();
  t.detach();
}

Status IoLoop::add(int fd, Handler* h, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = h;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0)
    return internal_error(std::string("epoll_ctl add: ") + std::strerror(errno));
  return Status::ok();
}

Status IoLoop::modify(int fd, Handler* h, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = h;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0)
    return internal_error(std::string("epoll_ctl modify: ") + std::strerror(errno));
  return Status::ok();
}

void IoLoop::remove(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  if (in_loop_thread()) return;
  // A round collected before the removal may still name the handler. The
  // round that sees this wake-up was collected after it, so once that round
  // is over, so is every round that could call the handler.
  std::unique_lock lock(mu_);
  const uint64_t ticket = ++wake_requests_;
  wake();
  cv_.wait(lock, [&] { return wakes_done_ >= ticket; });
}

void IoLoop::wake() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

void IoLoop::run() {
  pthread_setname_np(pthread_self(), "omnib io loop");  // for top -H, perf and debuggers
  register_network_thread();  // lives as long as the process
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  while (true) {
    const int n = epoll_wait(epoll_fd_, events, kMaxEvents, -1);
    uint64_t woken = 0;
    bool was_woken = false;
    for (int i = 0; i < n; ++i) {
      if (events[i].data.ptr == nullptr) {
        uint64_t drained;
        while (read(wake_fd_, &drained, sizeof(drained)) > 0) {
        }
        std::lock_guard lock(mu_);
        woken = wake_requests_;
        was_woken = true;
        continue;
      }
      static_cast<Handler*>(events[i].data.ptr)->on_ready(events[i].events);
    }
    if (was_woken) {
      {
        std::lock_guard lock(mu_);
        wakes_done_ = std::max(wakes_done_, woken);
      }
      cv_.notify_all();
    }
  }
}

}  // namespace omnib
