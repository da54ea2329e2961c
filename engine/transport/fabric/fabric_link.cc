#include "engine/transport/fabric/fabric_link.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

namespace omnib {

namespace fw = fabric_wire;

namespace {

constexpr size_t kHeaderBytes = sizeof(wire::FrameHeader);

// Copies the payload parts, back to back, to `out`.
void gather(std::span<const iovec> parts, uint8_t* out) {
  for (const auto& p : parts) {
    if (p.iov_len) std::memcpy(out, p.iov_base, p.iov_len);
    out += p.iov_len;
  }
}

}  // namespace

FabricLink::FabricLink(std::shared_ptr<FabricEndpoint> endpoint, const FabricPeer& peer, uint32_t job_id,
                       std::chrono::milliseconds timeout)
    : ep_(std::move(endpoint)),
      peer_(peer),
      job_id_(job_id),
      timeout_(timeout),
      name_("fabric link to rank " + std::to_string(peer.rank)),
      mr_local_(ep_->needs_local_registration()) {}

void FabricLink::schedule_pump() { ep_->run_pump(shared_from_this(), pump_queued_); }

void FabricLink::notify_locked(bool received, bool sent) {
  if (!received && !sent) return;
  changed_.notify_all();
  if (received && receive_waker_) receive_waker_->notify();
  if (sent && send_waker_) send_waker_->notify();
}

void FabricLink::fail_locked(Status why) {
  if (!failure_.is_ok()) return;
  failure_ = std::move(why);
  notify_locked(true, true);
  schedule_pump();  // cancels the posted receives
}

bool FabricLink::took_locked(ssize_t rc, const char* what) {
  if (rc == 0) return true;
  if (rc == -FI_EAGAIN)
    ep_->retry_later(shared_from_this());
  else
    fail_locked(unavailable_error(name_ + ": " + what + " failed: " + ep_->error_text(rc)));
  return false;
}

uint32_t FabricLink::rest_parts(uint64_t length) const {
  if (length <= fw::kInlinePayload) return 0;
  const uint64_t max = ep_->max_message_bytes();
  return static_cast<uint32_t>((length + max - 1) / max);
}

size_t FabricLink::rest_part_bytes(uint64_t length, uint32_t part) const {
  const uint64_t max = ep_->max_message_bytes();
  return static_cast<size_t>(std::min<uint64_t>(max, length - uint64_t{part} * max));
}

Result<std::optional<uint64_t>> FabricLink::post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                                 std::span<const iovec> parts, bool copy,
                                                 SteadyClock::time_point deadline) {
  uint64_t length = 0;
  size_t pieces = 0;
  for (const auto& p : parts) {
    length += p.iov_len;
    pieces += p.iov_len > 0;
  }
  if (length > wire::kMaxPayload || rest_parts(length) > fw::kMaxRestParts)
    return internal_error(name_ + ": a frame of " + std::to_string(length) + " payload bytes is over the limit");
  // The caller's memory goes to the provider as it is when the provider
  // needs no registration and takes the parts in one message; small
  // payloads are copied into the head anyway.
  const bool lend = !copy && (length <= fw::kInlinePayload ||
                              (!mr_local_ && pieces <= ep_->iov_limit() && rest_parts(length) == 1));
  Outgoing o;
  {
    std::unique_lock lock(mu_);
    if (copy) {
      if (!changed_.wait_until(lock, deadline, [&] { return !failure_.is_ok() || posted_ - done_ < send_window_; }))
        return timeout_error(name_ + ": send made no progress within the timeout (is the peer stuck?)");
    }
    if (!failure_.is_ok()) return failure_;
    if (posted_ - done_ >= send_window_) return std::optional<uint64_t>();
    if (!lend && !spare_staging_.empty()) {
      o.staging = std::move(spare_staging_.back());
      spare_staging_.pop_back();
    }
  }
  // One sender at a time (the Connection rule): the window only grows meanwhile.
  o.header = make_header(type, job_id_, tag, seq, length);
  if (lend) {
    for (const auto& p : parts)
      if (p.iov_len) o.parts.push_back(p);
  } else {
    o.staging.bytes().resize(length);
    gather(parts, o.staging.bytes().data());
    if (length) o.parts.push_back({o.staging.bytes().data(), length});
    o.copied = true;
  }
  std::lock_guard lock(mu_);
  if (!failure_.is_ok()) return failure_;
  o.ticket = ++posted_;
  (o.copied ? paths_.copied : paths_.zero_copy)++;
  sent_.fetch_add(o.bytes(), std::memory_order_relaxed);
  frames_sent_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t ticket = o.ticket;
  outbox_.push_back(std::move(o));
  schedule_pump();
  return std::optional<uint64_t>(ticket);
}

uint64_t FabricLink::sends_done() const {
  std::lock_guard lock(mu_);
  return done_;
}

Status FabricLink::health() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void FabricLink::set_wakers(Waker* on_receive, Waker* on_send) {
  std::lock_guard lock(mu_);
  receive_waker_ = on_receive;
  send_waker_ = on_send;
}

void FabricLink::set_windows(size_t recv_frames, size_t send_frames, size_t inflight_bytes) {
  std::lock_guard lock(mu_);
  recv_window_ = std::max<size_t>(1, recv_frames);
  send_window_ = std::max<size_t>(1, send_frames);
  inflight_budget_ = inflight_bytes;
  notify_locked(false, true);  // a wider send window lets a waiting sender on
  schedule_pump();
}

size_t FabricLink::recv_window() const {
  std::lock_guard lock(mu_);
  return recv_window_;
}

size_t FabricLink::send_window() const {
  std::lock_guard lock(mu_);
  return send_window_;
}

FabricConnection::SendPaths FabricLink::send_paths() const {
  std::lock_guard lock(mu_);
  return paths_;
}

void FabricLink::close(const std::string& why) {
  std::lock_guard lock(mu_);
  closing_ = true;
  fail_locked(unavailable_error(name_ + ": " + why));
  schedule_pump();
}

void FabricLink::wait_lent_memory(SteadyClock::time_point deadline) {
  std::unique_lock lock(mu_);
  changed_.wait_until(lock, deadline, [&] { return lent_messages_ == 0; });
}

void FabricLink::wait_sends_done(SteadyClock::time_point deadline) {
  std::unique_lock lock(mu_);
  changed_.wait_until(lock, deadline, [&] { return !failure_.is_ok() || done_ == posted_; });
}

void FabricLink::pump() {
  std::lock_guard lock(mu_);
  if (!failure_.is_ok()) {
    if (closing_ && !close_sent_) close_sent_ = send_control_locked(fw::ControlType::kClose);
    cancel_receives_locked();
    return;
  }
  post_receives_locked();
  maybe_send_credit_locked();
  while (started_ < outbox_.size() && start_next_locked()) {
  }
}

bool FabricLink::credit_allows(const Outgoing& o) const {
  if (next_frame_ >= peer_frames_) return false;
  if (peer_budget_ == 0) return true;
  // Beyond the budget only when at most a quarter of it is unread.
  return bytes_started_ + o.bytes() <= peer_read_ + peer_budget_ || bytes_started_ <= peer_read_ + peer_budget_ / 4;
}

// Starts (or goes on starting, after the provider said "again") the first
// frame not yet handed over. False when it cannot go further now.
bool FabricLink::start_next_locked() {
  Outgoing& o = outbox_[started_];
  if (o.messages == 0) {
    if (!credit_allows(o)) return false;
    if (o.copied) {
      Status reg = o.staging.ensure_registered(ep_->registrar());
      if (!reg.is_ok()) {
        fail_locked(reg.with_context(name_ + ": "));
        return false;
      }
    }
    o.frame = next_frame_++;
    bytes_started_ += o.bytes();
    o.messages = 1 + rest_parts(o.header.length);
  }
  auto self = shared_from_this();
  while (o.posted < o.messages) {
    ssize_t rc;
    if (o.posted == 0) {
      auto slot = ep_->take_slot();
      if (!slot.is_ok()) {
        fail_locked(slot.status().with_context(name_ + ": "));
        return false;
      }
      uint8_t* head = slot.value().data;
      std::memcpy(head, &o.header, kHeaderBytes);
      const bool inline_payload = o.header.length <= fw::kInlinePayload;
      if (inline_payload) gather(o.parts, head + kHeaderBytes);
      iovec iov{head, kHeaderBytes + (inline_payload ? o.header.length : 0)};
      void* desc = slot.value().desc;
      FabricOp* op = ep_->make_op(self, kHeadSend, o.ticket, slot.value());
      rc = ep_->send(op, peer_.addr, fw::tag(fw::Kind::kHead, peer_.peer_conn, o.frame), &iov, &desc, 1);
      if (rc != 0) ep_->give_back(slot.value());
    } else {
      const uint32_t part = o.posted - 1;
      FabricOp* op = ep_->make_op(self, kRestSend, o.ticket);
      const uint64_t tag = fw::tag(fw::Kind::kRest, peer_.peer_conn, o.frame, part);
      if (o.copied) {
        const size_t offset = static_cast<size_t>(uint64_t{part} * ep_->max_message_bytes());
        iovec iov{o.staging.bytes().data() + offset, rest_part_bytes(o.header.length, part)};
        void* desc = o.staging.desc();
        rc = ep_->send(op, peer_.addr, tag, &iov, &desc, 1);
      } else {
        std::vector<void*> descs(o.parts.size(), nullptr);
        rc = ep_->send(op, peer_.addr, tag, o.parts.data(), descs.data(), o.parts.size());
        if (rc == 0) ++lent_messages_;
      }
    }
    if (!took_locked(rc, "sending")) return false;
    ++o.posted;
  }
  ++started_;
  return true;
}

FabricLink::Outgoing* FabricLink::outgoing_locked(uint64_t ticket) {
  if (outbox_.empty() || ticket < outbox_.front().ticket || ticket - outbox_.front().ticket >= outbox_.size())
    return nullptr;
  return &outbox_[ticket - outbox_.front().ticket];
}

void FabricLink::release_send_locked(FabricOp& op, Outgoing* o) {
  if (op.kind == kRestSend && o && !o->copied) {
    --lent_messages_;
    changed_.notify_all();
  }
  if (op.slot.data) ep_->give_back(op.slot);
}

void FabricLink::on_send_done_locked(FabricOp& op) {
  Outgoing* o = outgoing_locked(op.arg);
  release_send_locked(op, o);
  if (!o) return;
  ++o->finished;
  const uint64_t before = done_;
  while (started_ > 0 && outbox_.front().finished == outbox_.front().messages) {
    Outgoing& o = outbox_.front();
    done_ = o.ticket;
    if (o.copied && spare_staging_.size() < send_window_) spare_staging_.push_back(std::move(o.staging));
    outbox_.pop_front();
    --started_;
  }
  notify_locked(false, done_ != before);
}

void FabricLink::on_done(FabricOp& op, size_t len, uint64_t tag) {
  std::lock_guard lock(mu_);
  switch (op.kind) {
    case kHeadSend:
    case kRestSend:
      on_send_done_locked(op);
      break;
    case kControlSend:
      if (op.slot.data) ep_->give_back(op.slot);
      if (op.arg == static_cast<uint64_t>(fw::ControlType::kCredit)) credit_in_flight_ = false;
      break;
    case kHeadRecv:
      on_head_locked(op, len);
      break;
    case kRestRecv:
      on_rest_locked(op, len);
      break;
    case kControlRecv:
      on_control_locked(op, len);
      break;
  }
  if (failure_.is_ok()) {
    // Completions free credits and windows: go on with what waits. The
    // heads freed by frames taken meanwhile are posted before a credit is
    // weighed (try_recv leaves both to this thread unless a credit was due).
    post_receives_locked();
    maybe_send_credit_locked();
    while (started_ < outbox_.size() && start_next_locked()) {
    }
  }
}

void FabricLink::on_failed(FabricOp& op, bool canceled, const std::string& why) {
  std::lock_guard lock(mu_);
  const bool is_send = op.kind == kHeadSend || op.kind == kRestSend || op.kind == kControlSend;
  if (op.kind == kControlSend) {
    if (op.slot.data) ep_->give_back(op.slot);
  } else if (is_send) {
    release_send_locked(op, outgoing_locked(op.arg));
  } else if (op.slot.data) {
    ep_->give_back(op.slot);
  }
  if (!is_send) receives_.erase(&op);
  if (op.kind == kControlSend && op.arg == static_cast<uint64_t>(fw::ControlType::kCredit)) credit_in_flight_ = false;
  // A peer that closed may be gone before a credit reaches it: no failure
  // of ours, and the frames it sent whole are still to be delivered.
  if (canceled || (op.kind == kControlSend && peer_closed_after_)) return;
  if (is_send)
    fail_locked(unavailable_error(name_ + ": sending to rank " + std::to_string(peer_.rank) + " failed: " + why +
                                  " (did the peer die?)"));
  else
    fail_locked(unavailable_error(name_ + ": receiving from rank " + std::to_string(peer_.rank) + " failed: " + why));
}

}  // namespace omnib
