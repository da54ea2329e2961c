// The receive side of a fabric link: head receives as credits, the rest of
// each payload, delivery in frame order, and the control messages.
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

#include "engine/transport/fabric/fabric_link.h"

namespace omnib {

namespace fw = fabric_wire;

namespace {

constexpr size_t kHeaderBytes = sizeof(wire::FrameHeader);
// Control messages the link keeps a receive posted for: a credit and a
// closing notice may be on their way at once.
constexpr size_t kControlReceives = 2;
// With a byte budget, one more head receive per this many bytes of it, at
// most kMaxBudgetHeads: frames smaller than that (a sparse stream's) then
// flow a budget at a time, as through a TCP socket's receive buffer, rather
// than recv_window frames per credit round trip.
constexpr uint64_t kBudgetBytesPerHead = fabric_wire::kHeadBytes;
constexpr uint64_t kMaxBudgetHeads = 64;

}  // namespace

Result<bool> FabricLink::try_recv(Frame& frame) {
  std::lock_guard lock(mu_);
  if (inbox_.empty()) {
    if (!failure_.is_ok()) return failure_;
    return false;
  }
  std::swap(frame, inbox_.front());
  // The caller's old payload buffer serves a later frame.
  if (spare_payloads_.size() < recv_window_) spare_payloads_.push_back(std::move(inbox_.front().payload));
  inbox_.pop_front();
  ++taken_;
  bytes_taken_ += kHeaderBytes + frame.header.length;
  // The progress thread posts the freed head receive with its next
  // completion anyway; it is woken for it only when a credit is due.
  if (credit_due_locked(taken_ + grant_window_locked())) schedule_pump();
  return true;
}

Status FabricLink::recv(Frame& frame) {
  const auto deadline = deadline_after(timeout_);
  while (true) {
    auto got = try_recv(frame);
    if (!got.is_ok()) return got.status();
    if (got.value()) return validate_header(frame.header, job_id_, peer_.rank);
    std::unique_lock lock(mu_);
    if (!changed_.wait_until(lock, deadline, [&] { return !failure_.is_ok() || !inbox_.empty(); })) {
      if (arriving_.empty() || arriving_.front().state == Incoming::State::kHead)
        return timeout_error(name_ + ": nothing received within the timeout (is the peer stuck? raise -T if it "
                             "is only slow)");
      return timeout_error(name_ + ": a frame did not arrive whole within the timeout (its header came, announcing " +
                           std::to_string(arriving_.front().frame.header.length) +
                           " payload bytes; is the peer stuck? raise -T if it is only slow)");
    }
  }
}

void FabricLink::post_receives_locked() {
  auto self = shared_from_this();
  while (control_receives_ < kControlReceives) {
    auto slot = ep_->take_slot();
    if (!slot.is_ok()) return fail_locked(slot.status().with_context(name_ + ": "));
    FabricOp* op = ep_->make_op(self, kControlRecv, 0, slot.value());
    const ssize_t rc = ep_->recv(op, peer_.addr, fw::tag(fw::Kind::kControl, peer_.my_conn), 0, slot.value().data,
                                 sizeof(fw::Control), slot.value().desc);
    if (rc != 0) ep_->give_back(slot.value());
    if (!took_locked(rc, "posting a receive")) return;
    receives_.insert(op);
    ++control_receives_;
  }
  // One head receive per frame the peer may send: the credits.
  while (granted_ < taken_ + grant_window_locked()) {
    auto slot = ep_->take_slot();
    if (!slot.is_ok()) return fail_locked(slot.status().with_context(name_ + ": "));
    FabricOp* op = ep_->make_op(self, kHeadRecv, granted_, slot.value());
    const ssize_t rc = ep_->recv(op, peer_.addr, fw::tag(fw::Kind::kHead, peer_.my_conn, granted_), 0,
                                 slot.value().data, fw::kHeadBytes, slot.value().desc);
    if (rc != 0) ep_->give_back(slot.value());
    if (!took_locked(rc, "posting a receive")) return;
    receives_.insert(op);
    arriving_.emplace_back();
    ++granted_;
  }
  for (size_t i = 0; i < arriving_.size(); ++i) {
    Incoming& in = arriving_[i];
    if (in.state == Incoming::State::kRest && in.posted < in.parts && !post_rest_receives_locked(in, delivered_ + i))
      return;
  }
}

bool FabricLink::post_rest_receives_locked(Incoming& in, uint64_t frame) {
  auto self = shared_from_this();
  const uint64_t length = in.frame.header.length;
  uint8_t* base = mr_local_ ? in.bounce.bytes().data() : in.frame.payload.data();
  void* desc = mr_local_ ? in.bounce.desc() : nullptr;
  while (in.posted < in.parts) {
    const uint32_t part = in.posted;
    const size_t offset = static_cast<size_t>(uint64_t{part} * ep_->max_message_bytes());
    FabricOp* op = ep_->make_op(self, kRestRecv, frame << 4 | part);
    const ssize_t rc = ep_->recv(op, peer_.addr, fw::tag(fw::Kind::kRest, peer_.my_conn, frame, part), 0,
                                 base + offset, rest_part_bytes(length, part), desc);
    if (!took_locked(rc, "posting a receive")) return false;
    receives_.insert(op);
    ++in.posted;
  }
  return true;
}

uint64_t FabricLink::grant_window_locked() const {
  if (inflight_budget_ == 0) return recv_window_;
  return recv_window_ + std::clamp<uint64_t>(inflight_budget_ / kBudgetBytesPerHead, 1, kMaxBudgetHeads);
}

uint64_t FabricLink::bytes_read_locked() const {
  uint64_t read = bytes_taken_;
  const size_t held = std::min(inbox_.size(), recv_window_);
  for (size_t i = 0; i < held; ++i) read += kHeaderBytes + inbox_[i].header.length;
  return read;
}

// Credits go out in batches: frames when a quarter of the window is new,
// or when the peer has used every credit it had (it may be waiting); bytes
// when a quarter of the budget was read, or when nothing is on its way and
// more than a quarter of the budget arrived unadvertised (the peer may be
// held back: it sends past the budget only with at most a quarter unread).
bool FabricLink::credit_due_locked(uint64_t grant) const {
  if (credit_in_flight_ || !failure_.is_ok() || peer_closed_after_) return false;
  const uint64_t batch = std::max<uint64_t>(1, grant_window_locked() / 4);
  const bool frames_due =
      grant > advertised_frames_ && (grant - advertised_frames_ >= batch || heads_seen_ >= advertised_frames_);
  const uint64_t read = bytes_read_locked();
  const uint64_t quarter = inflight_budget_ / 4;
  const bool nothing_coming = heads_seen_ == delivered_;
  const bool bytes_due = inflight_budget_ > 0 && read > advertised_bytes_ &&
                         (read - advertised_bytes_ >= quarter ||
                          (nothing_coming && bytes_arrived_ - advertised_bytes_ > quarter));
  return frames_due || bytes_due || inflight_budget_ != advertised_budget_;
}

void FabricLink::maybe_send_credit_locked() {
  if (!credit_due_locked(granted_)) return;
  credit_in_flight_ = send_control_locked(fw::ControlType::kCredit);
  if (credit_in_flight_) {
    advertised_frames_ = granted_;
    advertised_bytes_ = bytes_read_locked();
    advertised_budget_ = inflight_budget_;
  }
}

bool FabricLink::send_control_locked(fw::ControlType type) {
  auto slot = ep_->take_slot();
  if (!slot.is_ok()) {
    fail_locked(slot.status().with_context(name_ + ": "));
    return false;
  }
  const uint64_t frames = type == fw::ControlType::kClose ? done_ : granted_;  // done_: tickets = frames, in order
  const fw::Control c{wire::kMagic, static_cast<uint32_t>(type), frames, bytes_read_locked(), inflight_budget_};
  std::memcpy(slot.value().data, &c, sizeof(c));
  iovec iov{slot.value().data, sizeof(c)};
  void* desc = slot.value().desc;
  auto self = shared_from_this();
  FabricOp* op = ep_->make_op(self, kControlSend, static_cast<uint64_t>(type), slot.value());
  const ssize_t rc = ep_->send(op, peer_.addr, fw::tag(fw::Kind::kControl, peer_.peer_conn), &iov, &desc, 1);
  if (rc != 0) ep_->give_back(slot.value());
  return took_locked(rc, "sending");
}

void FabricLink::on_head_locked(FabricOp& op, size_t len) {
  receives_.erase(&op);
  const uint8_t* head = op.slot.data;
  struct GiveBack {
    FabricEndpoint& ep;
    SlotPool::Slot slot;
    ~GiveBack() { ep.give_back(slot); }
  } give_back{*ep_, op.slot};
  if (!failure_.is_ok() || op.arg < delivered_) return;
  Incoming& in = arriving_[op.arg - delivered_];
  ++heads_seen_;
  const std::string from = name_ + ": frame from rank " + std::to_string(peer_.rank) + ": ";
  if (len < kHeaderBytes) return fail_locked(unavailable_error(from + "a head message of " + std::to_string(len) + " bytes"));
  wire::FrameHeader h;
  std::memcpy(&h, head, kHeaderBytes);
  Status valid = validate_header(h, job_id_, peer_.rank);
  if (!valid.is_ok()) return fail_locked(valid);
  const bool inline_payload = h.length <= fw::kInlinePayload;
  if (len != kHeaderBytes + (inline_payload ? h.length : 0) || rest_parts(h.length) > fw::kMaxRestParts)
    return fail_locked(unavailable_error(from + "a head message of " + std::to_string(len) + " bytes for a payload of " +
                                         std::to_string(h.length)));
  in.frame.header = h;
  if (in.frame.payload.capacity() < h.length && !spare_payloads_.empty()) {
    in.frame.payload = std::move(spare_payloads_.back());
    spare_payloads_.pop_back();
  }
  in.frame.payload.resize(h.length);
  if (inline_payload) {
    if (h.length) std::memcpy(in.frame.payload.data(), head + kHeaderBytes, h.length);
    in.state = Incoming::State::kComplete;
    deliver_locked();
    return;
  }
  in.state = Incoming::State::kRest;
  in.parts = in.left = rest_parts(h.length);
  if (mr_local_) {
    if (!spare_bounce_.empty()) {
      in.bounce = std::move(spare_bounce_.back());
      spare_bounce_.pop_back();
    }
    in.bounce.bytes().resize(h.length);
    Status reg = in.bounce.ensure_registered(ep_->registrar());
    if (!reg.is_ok()) return fail_locked(reg.with_context(name_ + ": "));
  }
  post_rest_receives_locked(in, op.arg);
  maybe_send_credit_locked();
}

void FabricLink::on_rest_locked(FabricOp& op, size_t len) {
  receives_.erase(&op);
  const uint64_t frame = op.arg >> 4;
  const auto part = static_cast<uint32_t>(op.arg & 0xf);
  if (!failure_.is_ok() || frame < delivered_) return;
  Incoming& in = arriving_[frame - delivered_];
  const size_t expected = rest_part_bytes(in.frame.header.length, part);
  if (len != expected)
    return fail_locked(unavailable_error(name_ + ": frame from rank " + std::to_string(peer_.rank) + ": " +
                                         std::to_string(len) + " payload bytes where its header announced " +
                                         std::to_string(expected)));
  if (--in.left > 0) return;
  if (mr_local_) {
    std::memcpy(in.frame.payload.data(), in.bounce.bytes().data(), in.frame.header.length);
    if (spare_bounce_.size() < recv_window_) spare_bounce_.push_back(std::move(in.bounce));
  }
  in.state = Incoming::State::kComplete;
  deliver_locked();
}

void FabricLink::on_control_locked(FabricOp& op, size_t len) {
  receives_.erase(&op);
  --control_receives_;
  fw::Control c{};
  std::memcpy(&c, op.slot.data, std::min(len, sizeof(c)));
  ep_->give_back(op.slot);
  if (!failure_.is_ok()) return;
  if (len != sizeof(c) || c.magic != wire::kMagic)
    return fail_locked(unavailable_error(name_ + ": rank " + std::to_string(peer_.rank) +
                                         " sent a malformed control message"));
  if (c.type == static_cast<uint32_t>(fw::ControlType::kClose)) {
    // Its last frames may still be arriving (the notice can overtake the
    // rest of one): they are delivered first, as TCP reads up to the FIN.
    peer_closed_after_ = c.frames_granted;
    return fail_when_peer_done_locked();
  }
  peer_frames_ = std::max(peer_frames_, c.frames_granted);
  peer_read_ = std::max(peer_read_, c.bytes_read);
  peer_budget_ = c.bytes_budget;
}

void FabricLink::deliver_locked() {
  bool any = false;
  while (!arriving_.empty() && arriving_.front().state == Incoming::State::kComplete) {
    Frame& f = arriving_.front().frame;
    const uint64_t bytes = kHeaderBytes + f.header.length;
    received_.fetch_add(bytes, std::memory_order_relaxed);
    frames_received_.fetch_add(1, std::memory_order_relaxed);
    bytes_arrived_ += bytes;
    inbox_.push_back(std::move(f));
    arriving_.pop_front();
    ++delivered_;
    any = true;
  }
  if (!any) return;
  notify_locked(true, false);
  maybe_send_credit_locked();
  fail_when_peer_done_locked();
}

void FabricLink::fail_when_peer_done_locked() {
  if (!peer_closed_after_ || delivered_ < *peer_closed_after_) return;
  fail_locked(unavailable_error(name_ + ": rank " + std::to_string(peer_.rank) +
                                " closed the link (did it fail, abort or exit?)"));
}

void FabricLink::cancel_receives_locked() {
  for (FabricOp* op : receives_) ep_->cancel(op);
  receives_.clear();
}

}  // namespace omnib
