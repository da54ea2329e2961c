#include "engine/transport/connection_core.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace omnib {

ConnectionCore::ConnectionCore(Hooks& hooks, std::string name, int peer_rank, uint32_t job_id,
                               std::chrono::milliseconds timeout)
    : hooks_(hooks), name_(std::move(name)), peer_rank_(peer_rank), job_id_(job_id), timeout_(timeout) {}

Result<bool> ConnectionCore::try_recv(Frame& frame) {
  std::lock_guard lock(mu_);
  if (inbox_.empty()) {
    if (!failure_.is_ok()) return failure_;
    return false;
  }
  const size_t held_before = inbox_.size();
  ++frames_taken_;
  bytes_taken_ += wire::frame_bytes(inbox_.front().header);
  std::swap(frame, inbox_.front());
  // The caller's old payload buffer serves a later frame.
  if (spare_payloads_.size() < recv_window_) spare_payloads_.push_back(std::move(inbox_.front().payload));
  inbox_.pop_front();
  hooks_.frame_taken_locked(held_before);
  return true;
}

Status ConnectionCore::recv(Frame& frame) {
  const auto deadline = Clock::now() + timeout_;
  while (true) {
    auto got = try_recv(frame);
    if (!got.is_ok()) return got.status();
    if (got.value()) return validate_header(frame.header, job_id_, peer_rank_);
    std::unique_lock lock(mu_);
    if (wait_locked(lock, deadline, [&] { return !failure_.is_ok() || !inbox_.empty(); })) continue;
    const std::string partial = hooks_.partial_frame_locked();
    if (partial.empty())
      return timeout_error(name_ + ": nothing received within the timeout (is the peer stuck? raise -T if it "
                           "is only slow)");
    return timeout_error(name_ + ": a frame did not arrive whole within the timeout (" + partial +
                         "; is the peer stuck? raise -T if it is only slow)");
  }
}

uint64_t ConnectionCore::sends_done() const {
  std::lock_guard lock(mu_);
  return done_;
}

Status ConnectionCore::health() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void ConnectionCore::set_wakers(Waker* on_receive, Waker* on_send) {
  std::scoped_lock lock(mu_, waker_mu_);
  receive_waker_ = on_receive;
  send_waker_ = on_send;
}

size_t ConnectionCore::recv_window() const {
  std::lock_guard lock(mu_);
  return recv_window_;
}

size_t ConnectionCore::send_window() const {
  std::lock_guard lock(mu_);
  return send_window_;
}

ByteCounters ConnectionCore::counters() const {
  return {sent_.load(), received_.load(), frames_sent_.load(), frames_received_.load()};
}

void ConnectionCore::fail_locked(Status why) {
  if (!failure_.is_ok()) return;
  failure_ = std::move(why);
  send_room_news_ = true;
  notify_locked(true, true);
}

void ConnectionCore::notify_locked(bool received, bool sent) { notify(received, sent); }

void ConnectionCore::notify(bool received, bool sent) {
  // A waiter checks its condition under mu_, which the change was made
  // under: told after the unlock, it cannot miss it.
  if (!received && !sent) return;
  changed_.notify_all();
  std::lock_guard lock(waker_mu_);
  if (received && receive_waker_) receive_waker_->notify();
  if (sent && send_waker_ && send_room_news_.exchange(false)) send_waker_->notify();
}

void ConnectionCore::set_windows(size_t recv_frames, size_t send_frames, size_t inflight_bytes) {
  std::lock_guard lock(mu_);
  recv_window_ = std::max<size_t>(1, recv_frames);
  send_window_ = std::max<size_t>(1, send_frames);
  receive_budget_.set(std::min<uint64_t>(inflight_bytes, UINT32_MAX));
  send_room_news_ = true;
  hooks_.windows_changed_locked();
}

void ConnectionCore::size_payload_locked(UninitBytes& payload, uint64_t length) {
  if (payload.capacity() < length && !spare_payloads_.empty()) {
    payload = std::move(spare_payloads_.back());
    spare_payloads_.pop_back();
  }
  payload.resize(length);
}

void ConnectionCore::take_spare_locked(UninitBytes& payload) {
  if (spare_payloads_.empty()) return;
  payload = std::move(spare_payloads_.back());
  spare_payloads_.pop_back();
}

void ConnectionCore::deliver_locked(Frame&& frame) {
  const uint64_t bytes = wire::frame_bytes(frame.header);
  bytes_arrived_ += bytes;
  received_.fetch_add(bytes, std::memory_order_relaxed);
  frames_received_.fetch_add(1, std::memory_order_relaxed);
  inbox_.push_back(std::move(frame));
}

uint64_t ConnectionCore::bytes_read_locked() const {
  uint64_t read = bytes_taken_;
  const size_t held = std::min(inbox_.size(), recv_window_);
  for (size_t i = 0; i < held; ++i) read += wire::frame_bytes(inbox_[i].header);
  return read;
}

void ConnectionCore::count_sent(uint64_t bytes, uint64_t frames) {
  if (bytes) sent_.fetch_add(bytes, std::memory_order_relaxed);
  if (frames) frames_sent_.fetch_add(frames, std::memory_order_relaxed);
}

Status ConnectionCore::wait_send_room_locked(std::unique_lock<std::mutex>& lock, Clock::time_point deadline) {
  if (!wait_locked(lock, deadline, [&] { return !failure_.is_ok() || !send_window_full_locked(); }))
    return timeout_error(name_ + ": send made no progress within the timeout (is the peer stuck?)");
  return failure_;
}

Status ConnectionCore::wait_send_done_locked(std::unique_lock<std::mutex>& lock, uint64_t ticket,
                                             Clock::time_point deadline) {
  if (!wait_locked(lock, deadline, [&] { return !failure_.is_ok() || done_ >= ticket; }))
    return timeout_error(name_ + ": send did not finish within the timeout (is the peer stuck?)");
  return done_ >= ticket ? Status::ok() : failure_;
}

}  // namespace omnib
