// When a link tells its send waker that sends finished: once at most half
// of the send window is left unfinished, on a wider window and on failure
// (ConnectionCore::send_room_news_), while blocking sends hear of every
// frame.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "engine/transport/connection_core.h"

namespace omnib {
namespace {

class NoHooks : public ConnectionCore::Hooks {
 public:
  void frame_taken_locked(size_t) override {}
  std::string partial_frame_locked() const override { return ""; }
  void windows_changed_locked() override {}
};

struct Link {
  NoHooks hooks;
  ConnectionCore core{hooks, "test link", 1, 7, std::chrono::milliseconds(1000)};
  Waker on_receive, on_send;
  Link(size_t send_window) {
    core.set_wakers(&on_receive, &on_send);
    widen(send_window);
  }
  // Sets the send window and tells the wakers, as a transport's
  // windows_changed_locked does.
  void widen(size_t send_window) {
    core.set_windows(2, send_window, 0);
    core.notify(false, true);
  }
  // Posts `n` frames.
  void post(int n) {
    std::lock_guard lock(core.mu());
    for (int i = 0; i < n; ++i) core.next_ticket_locked();
  }
  // Finishes every ticket up to `ticket`, as a transport does, and returns
  // how often the send waker was told.
  uint64_t finish(uint64_t ticket) {
    const uint64_t before = on_send.mark();
    {
      std::lock_guard lock(core.mu());
      core.sends_finished_locked(ticket);
    }
    core.notify(false, true);
    return on_send.mark() - before;
  }
};

TEST(SendWaker, HearsOncePerHalfWindowWhileTheWindowStaysFull) {
  Link link(4);
  link.post(4);
  EXPECT_EQ(link.finish(1), 0u) << "three of four unfinished: no news yet";
  EXPECT_EQ(link.finish(2), 1u) << "half the window free";
  link.post(2);
  EXPECT_EQ(link.finish(3), 0u);
  EXPECT_EQ(link.finish(4), 1u);
  EXPECT_EQ(link.finish(6), 1u) << "the last send finished";
  EXPECT_EQ(link.on_receive.mark(), 0u);
}

TEST(SendWaker, ASmallWindowHearsOfEveryFrame) {
  for (size_t window : {1, 2}) {
    Link link(window);
    link.post(static_cast<int>(window));
    for (uint64_t t = 1; t <= window; ++t) EXPECT_EQ(link.finish(t), 1u) << "window " << window << ", ticket " << t;
  }
}

TEST(SendWaker, AWiderWindowAndAFailureAreNews) {
  Link link(8);
  link.post(8);
  EXPECT_EQ(link.finish(1), 0u);
  uint64_t before = link.on_send.mark();
  link.widen(16);
  EXPECT_EQ(link.on_send.mark() - before, 1u);
  link.post(8);
  EXPECT_EQ(link.finish(2), 0u) << "14 of 16 unfinished";
  before = link.on_send.mark();
  {
    std::lock_guard lock(link.core.mu());
    link.core.fail_locked(unavailable_error("the peer is gone"));
  }
  EXPECT_EQ(link.on_send.mark() - before, 1u);
}

}  // namespace
}  // namespace omnib
