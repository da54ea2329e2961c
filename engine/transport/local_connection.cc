#include "engine/transport/local_connection.h"

#include <cstring>

namespace omnib {

std::pair<std::unique_ptr<LocalConnection>, std::unique_ptr<LocalConnection>> LocalConnection::make_pair(
    int rank, std::chrono::milliseconds timeout, size_t max_queued_frames) {
  auto a_to_b = std::make_shared<Queue>();
  auto b_to_a = std::make_shared<Queue>();
  std::unique_ptr<LocalConnection> a(new LocalConnection(rank, timeout, max_queued_frames, b_to_a, a_to_b));
  std::unique_ptr<LocalConnection> b(new LocalConnection(rank, timeout, max_queued_frames, a_to_b, b_to_a));
  return {std::move(a), std::move(b)};
}

Status LocalConnection::send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) {
  Frame frame;
  {
    std::lock_guard lock(out_->mu);
    if (!out_->spare_payloads.empty()) {
      frame.payload = std::move(out_->spare_payloads.back());
      out_->spare_payloads.pop_back();
    }
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
  std::unique_lock lock(out_->mu);
  if (!out_->cv.wait_for(lock, timeout_, [&] { return out_->aborted || out_->frames.size() < max_queued_; }))
    return timeout_error("local link of rank " + std::to_string(rank_) + ": send blocked past the timeout");
  if (out_->aborted) return unavailable_error("local link of rank " + std::to_string(rank_) + " was aborted");
  out_->frames.push_back(std::move(frame));
  out_->cv.notify_all();
  return Status::ok();
}

Status LocalConnection::recv(Frame& frame) {
  std::unique_lock lock(in_->mu);
  if (!in_->cv.wait_for(lock, timeout_, [&] { return in_->aborted || !in_->frames.empty(); }))
    return timeout_error("local link of rank " + std::to_string(rank_) + ": nothing received within the timeout");
  if (in_->aborted) return unavailable_error("local link of rank " + std::to_string(rank_) + " was aborted");
  // The caller's previous payload goes back to the sender's pool.
  std::swap(frame, in_->frames.front());
  if (in_->spare_payloads.size() < max_queued_) in_->spare_payloads.push_back(std::move(in_->frames.front().payload));
  in_->frames.pop_front();
  in_->cv.notify_all();
  return Status::ok();
}

void LocalConnection::abort() {
  for (auto* q : {in_.get(), out_.get()}) {
    std::lock_guard lock(q->mu);
    q->aborted = true;
    q->cv.notify_all();
  }
}

}  // namespace omnib
