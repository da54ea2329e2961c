// What every framed connection keeps, whatever carries its bytes: the inbox
// of frames that arrived whole and its window, the tickets of posted frames
// and the send window, the byte budget both ways (byte_budget.h), the
// wakers, the failure that ends the link, and the byte counters. The TCP and
// fabric connections feed it from their transports' events; the Connection
// calls that only take from it or read it are written here once
// (FramedConnection forwards them).
//
// Locking: one mutex, mu(), guards it all; functions named *_locked want it
// held, and the transport's hooks are called with it held. The wakers have
// a mutex of their own, held while they are told, so once set_wakers()
// returns no notify of an old waker is still running and its owner may
// destroy it; that lets the network thread tell them after it let go of
// mu() (notify()), so that a lane it wakes does not wake only to wait for
// mu() and be woken a second time.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/transport/byte_budget.h"
#include "engine/transport/connection.h"
#include "engine/transport/waker.h"

namespace omnib {

class ConnectionCore {
 public:
  using Clock = std::chrono::steady_clock;

  // What the transport does at the core's events (mu held).
  class Hooks {
   public:
    virtual ~Hooks() = default;
    // The reader took a frame; the inbox held `held_before` frames before.
    virtual void frame_taken_locked(size_t held_before) = 0;
    // What arrived of the next frame, for a receive that timed out ("N
    // bytes arrived"); empty when nothing did.
    virtual std::string partial_frame_locked() const = 0;
    // set_windows() changed the windows or the byte budget.
    virtual void windows_changed_locked() = 0;
  };

  // `name` opens every message ("tcp link to rank 3"). Blocking calls end
  // after `timeout` (kTimeout).
  ConnectionCore(Hooks& hooks, std::string name, int peer_rank, uint32_t job_id, std::chrono::milliseconds timeout);
  ConnectionCore(const ConnectionCore&) = delete;
  ConnectionCore& operator=(const ConnectionCore&) = delete;

  // ---- The Connection calls (any thread; they take the lock).
  Result<bool> try_recv(Frame& frame);
  Status recv(Frame& frame);
  uint64_t sends_done() const;
  Status health() const;
  void set_wakers(Waker* on_receive, Waker* on_send);
  // The windows (each at least one frame) and the byte budget; a credit
  // carries the budget in 32 bits, so it stops at 4 GiB.
  void set_windows(size_t recv_frames, size_t send_frames, size_t inflight_bytes);
  size_t recv_window() const;
  size_t send_window() const;
  ByteCounters counters() const;

  // ---- For the transport.
  std::mutex& mu() const { return mu_; }
  const std::string& name() const { return name_; }
  int peer_rank() const { return peer_rank_; }
  uint32_t job_id() const { return job_id_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  bool failed_locked() const { return !failure_.is_ok(); }
  const Status& failure_locked() const { return failure_; }
  // Fails the link (a later reason is dropped) and wakes every waiter.
  void fail_locked(Status why);
  // Wakes the blocking calls and tells the wakers.
  void notify_locked(bool received, bool sent);
  // The same without mu() held, for what a transport changed under it.
  void notify(bool received, bool sent);
  // Wakes the blocking calls only (a transport's own waits share them).
  void wake_waiters_locked() { changed_.notify_all(); }
  size_t recv_window_locked() const { return recv_window_; }
  size_t send_window_locked() const { return send_window_; }
  // Waits on the lock's condition until `ready` or the deadline; false then.
  template <typename Ready>
  bool wait_locked(std::unique_lock<std::mutex>& lock, Clock::time_point deadline, Ready ready) {
    return changed_.wait_until(lock, deadline, ready);
  }

  // Receive side.
  size_t inbox_size_locked() const { return inbox_.size(); }
  // Frame bytes (headers included) of the frame at `i` of the inbox.
  uint64_t inbox_frame_bytes_locked(size_t i) const { return wire::frame_bytes(inbox_[i].header); }
  // Makes `payload` hold `length` bytes, swapping in a spare buffer when
  // its own is too small.
  void size_payload_locked(UninitBytes& payload, uint64_t length);
  // A spare buffer, if any, into `payload` (for the next frame to read).
  void take_spare_locked(UninitBytes& payload);
  // A frame that arrived whole: counted, and queued for the reader.
  void deliver_locked(Frame&& frame);
  // Frame bytes the reader took or holds in the first recv_window() frames
  // of the inbox (what a TCP reader would have read off its socket).
  uint64_t bytes_read_locked() const;
  uint64_t bytes_arrived_locked() const { return bytes_arrived_; }
  uint64_t frames_taken_locked() const { return frames_taken_; }
  ReceiveBudget& receive_budget_locked() { return receive_budget_; }

  // Send side.
  bool send_window_full_locked() const { return posted_ - done_ >= send_window_; }
  uint64_t next_ticket_locked() { return ++posted_; }
  uint64_t posted_locked() const { return posted_; }
  uint64_t done_locked() const { return done_; }
  // Every ticket up to `ticket` finished. The send waker hears of it once
  // at most half the window is left unfinished (see send_room_news_).
  void sends_finished_locked(uint64_t ticket) {
    done_ = ticket;
    if (posted_ - done_ <= send_window_ / 2) send_room_news_ = true;
  }
  void count_sent(uint64_t bytes, uint64_t frames);
  SendBudget& send_budget_locked() { return send_budget_; }
  // Blocking sends: wait until the window has room, or `ticket` finished
  // (or the link failed); kTimeout at the deadline.
  Status wait_send_room_locked(std::unique_lock<std::mutex>& lock, Clock::time_point deadline);
  Status wait_send_done_locked(std::unique_lock<std::mutex>& lock, uint64_t ticket, Clock::time_point deadline);

 private:
  Hooks& hooks_;
  const std::string name_;
  const int peer_rank_;
  const uint32_t job_id_;
  const std::chrono::milliseconds timeout_;

  mutable std::mutex mu_;
  std::condition_variable changed_;  // blocking send and recv wait here
  Status failure_;                   // set once: the link is dead
  std::mutex waker_mu_;  // guards the two wakers; taken after mu_ where both are
  Waker* receive_waker_ = nullptr;
  Waker* send_waker_ = nullptr;

  std::deque<Frame> inbox_;
  size_t recv_window_ = 16;
  std::vector<UninitBytes> spare_payloads_;  // the reader's old buffers, for later frames
  uint64_t frames_taken_ = 0;                // frames the reader took
  uint64_t bytes_taken_ = 0;                 // and their bytes
  uint64_t bytes_arrived_ = 0;               // frame bytes that arrived whole
  ReceiveBudget receive_budget_;

  size_t send_window_ = 16;
  uint64_t posted_ = 0;  // the last ticket handed out
  uint64_t done_ = 0;    // every ticket up to this one finished
  SendBudget send_budget_;
  // Whether the send waker has news: half the window free, a wider window,
  // or a failure. A lane that keeps a link's window full is woken once per
  // half window, not once per frame (each wake-up costs its rank CPU; on
  // hosts whose cores the ranks share, a wait for one too): the other half
  // keeps the link busy meanwhile. Blocking sends are told of every frame.
  std::atomic<bool> send_room_news_{false};

  std::atomic<uint64_t> sent_{0}, received_{0}, frames_sent_{0}, frames_received_{0};
};

}  // namespace omnib
