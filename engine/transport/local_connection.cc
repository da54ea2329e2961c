#include "engine/transport/local_connection.h"

#include <cstring>

namespace omnib {

using SteadyClock = std::chrono::steady_clock;

std::pair<std::unique_ptr<LocalConnection>, std::unique_ptr<LocalConnection>> LocalConnection::make_pair(
    int rank, std::chrono::milliseconds timeout, size_t max_queued_frames) {
  auto a_to_b = std::make_shared<Queue>();
  auto b_to_a = std::make_shared<Queue>();
  a_to_b->capacity = b_to_a->capacity = max_queued_frames;
  std::unique_ptr<LocalConnection> a(new LocalConnection(rank, timeout, b_to_a, a_to_b));
  std::unique_ptr<LocalConnection> b(new LocalConnection(rank, timeout, a_to_b, b_to_a));
  return {std::move(a), std::move(b)};
}

// The wakers are told while the queue's lock is held: set_wakers() takes that
// lock, so once it returns no notify of the old waker is still running, and
// its owner may destroy it (told after the unlock, a sender's last notify
// could reach a waker already gone: a lock on freed stack memory, which hung
// RankOrderMerge's test under load).
Result<bool> LocalConnection::try_put(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) {
  {
    std::lock_guard lock(out_->mu);
    if (out_->aborted) return unavailable_error(name() + " was aborted");
    if (out_->frames.size() >= out_->capacity) return false;
    Frame frame;
    if (!out_->spare_payloads.empty()) {
      frame.payload = std::move(out_->spare_payloads.back());
      out_->spare_payloads.pop_back();
    }
    uint64_t length = 0;
    for (const auto& p : parts) length += p.iov_len;
    frame.header = make_header(type, 0, tag, seq, length);
    frame.payload.resize(length);
    size_t offset = 0;
    for (const auto& p : parts) {
      if (p.iov_len) std::memcpy(frame.payload.data() + offset, p.iov_base, p.iov_len);
      offset += p.iov_len;
    }
    out_->frames.push_back(std::move(frame));
    ++out_->posted;
    if (out_->receiver_waker) out_->receiver_waker->notify();
  }
  out_->cv.notify_all();
  return true;
}

Status LocalConnection::send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) {
  const auto deadline = SteadyClock::now() + timeout_;
  while (true) {
    auto put = try_put(type, tag, seq, parts);
    if (!put.is_ok()) return put.status();
    if (put.value()) return Status::ok();
    std::unique_lock lock(out_->mu);
    if (!out_->cv.wait_until(lock, deadline, [&] { return out_->aborted || out_->frames.size() < out_->capacity; }))
      return timeout_error(name() + ": send blocked past the timeout");
  }
}

Result<bool> LocalConnection::try_recv(Frame& frame) {
  {
    std::lock_guard lock(in_->mu);
    if (in_->frames.empty()) {
      if (in_->aborted) return unavailable_error(name() + " was aborted");
      return false;
    }
    // The caller's previous payload goes back to the sender's pool.
    std::swap(frame, in_->frames.front());
    if (in_->spare_payloads.size() < in_->capacity)
      in_->spare_payloads.push_back(std::move(in_->frames.front().payload));
    in_->frames.pop_front();
    if (in_->sender_waker) in_->sender_waker->notify();
  }
  in_->cv.notify_all();
  return true;
}

Status LocalConnection::recv(Frame& frame) {
  const auto deadline = SteadyClock::now() + timeout_;
  while (true) {
    auto got = try_recv(frame);
    if (!got.is_ok()) return got.status();
    if (got.value()) return Status::ok();
    std::unique_lock lock(in_->mu);
    if (!in_->cv.wait_until(lock, deadline, [&] { return in_->aborted || !in_->frames.empty(); }))
      return timeout_error(name() + ": nothing received within the timeout");
  }
}

Result<std::optional<uint64_t>> LocalConnection::post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                                      std::span<const iovec> parts) {
  auto put = try_put(type, tag, seq, parts);
  if (!put.is_ok()) return put.status();
  if (!put.value()) return std::optional<uint64_t>();
  std::lock_guard lock(out_->mu);
  return std::optional<uint64_t>(out_->posted);
}

uint64_t LocalConnection::sends_done() const {
  std::lock_guard lock(out_->mu);
  return out_->posted;  // copied at post: done at once
}

Status LocalConnection::health() const {
  std::lock_guard lock(in_->mu);
  return in_->aborted ? unavailable_error(name() + " was aborted") : Status::ok();
}

void LocalConnection::set_wakers(Waker* on_receive, Waker* on_send) {
  {
    std::lock_guard lock(in_->mu);
    in_->receiver_waker = on_receive;
  }
  std::lock_guard lock(out_->mu);
  out_->sender_waker = on_send;
}

void LocalConnection::set_windows(size_t recv_frames, size_t, size_t) {
  std::lock_guard lock(in_->mu);
  in_->capacity = std::max<size_t>(1, recv_frames);
}

size_t LocalConnection::recv_window() const {
  std::lock_guard lock(in_->mu);
  return in_->capacity;
}

void LocalConnection::abort() {
  for (auto* q : {in_.get(), out_.get()}) {
    {
      std::lock_guard lock(q->mu);
      q->aborted = true;
      for (Waker* w : {q->receiver_waker, q->sender_waker})
        if (w) w->notify();
    }
    q->cv.notify_all();
  }
}

}  // namespace omnib
