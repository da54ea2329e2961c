#include "engine/transport/fabric/fabric_receiver.h"

#include <algorithm>
#include <cstring>

#include "engine/transport/fabric/fabric_link.h"

namespace omnib {

namespace fw = fabric_wire;

namespace {

constexpr size_t kHeaderBytes = sizeof(wire::FrameHeader);
// With a byte budget, one more head receive per this many bytes of it, at
// most kMaxBudgetHeads: frames smaller than that (a sparse stream's) then
// flow a budget at a time, as through a TCP socket's receive buffer, rather
// than recv_window frames per credit round trip.
constexpr uint64_t kBudgetBytesPerHead = fabric_wire::kHeadBytes;
constexpr uint64_t kMaxBudgetHeads = 64;

}  // namespace

FabricReceiver::FabricReceiver(FabricLink& link)
    : link_(link), mr_local_(link.endpoint().needs_local_registration()) {}

uint64_t FabricReceiver::grant_window_locked() const {
  ConnectionCore& core = link_.core();
  const uint64_t budget = core.receive_budget_locked().budget();
  if (budget == 0) return core.recv_window_locked();
  return core.recv_window_locked() + std::clamp<uint64_t>(budget / kBudgetBytesPerHead, 1, kMaxBudgetHeads);
}

uint64_t FabricReceiver::grant_target_locked() const {
  return link_.core().frames_taken_locked() + grant_window_locked();
}

std::string FabricReceiver::partial_frame_locked() const {
  if (arriving_.empty() || arriving_.front().state == Incoming::State::kHead) return "";
  return "its header came, announcing " + std::to_string(arriving_.front().frame.header.length) + " payload bytes";
}

void FabricReceiver::post_receives_locked() {
  // One head receive per frame the peer may send: the credits.
  while (granted_ < grant_target_locked())
    if (!post_head_receive_locked()) return;
  for (size_t i = 0; i < arriving_.size(); ++i) {
    Incoming& in = arriving_[i];
    if (in.state == Incoming::State::kRest && in.posted < in.parts && !post_rest_receives_locked(in, delivered_ + i))
      return;
  }
}

bool FabricReceiver::post_head_receive_locked() {
  FabricEndpoint& ep = link_.endpoint();
  auto slot = ep.take_slot();
  if (!slot.is_ok()) {
    link_.fail_locked(slot.status().with_context(link_.name() + ": "));
    return false;
  }
  FabricOp* op = ep.make_op(link_.self(), FabricLink::kHeadRecv, granted_, slot.value());
  const ssize_t rc = ep.recv(op, link_.peer().addr, fw::tag(fw::Kind::kHead, link_.peer().my_conn, granted_), 0,
                             slot.value().data, fw::kHeadBytes, slot.value().desc);
  if (rc != 0) ep.give_back(slot.value());
  if (!link_.took_locked(rc, "posting a receive")) return false;
  track_locked(op);
  arriving_.emplace_back();
  ++granted_;
  return true;
}

bool FabricReceiver::post_rest_receives_locked(Incoming& in, uint64_t frame) {
  FabricEndpoint& ep = link_.endpoint();
  const uint64_t length = in.frame.header.length;
  const uint64_t max_message = ep.max_message_bytes();
  uint8_t* base = mr_local_ ? in.bounce.bytes().data() : in.frame.payload.data();
  void* desc = mr_local_ ? in.bounce.desc() : nullptr;
  while (in.posted < in.parts) {
    const uint32_t part = in.posted;
    const size_t offset = static_cast<size_t>(uint64_t{part} * max_message);
    FabricOp* op = ep.make_op(link_.self(), FabricLink::kRestRecv, frame << 4 | part);
    const ssize_t rc = ep.recv(op, link_.peer().addr, fw::tag(fw::Kind::kRest, link_.peer().my_conn, frame, part), 0,
                               base + offset, fw::rest_part_bytes(length, part, max_message), desc);
    if (!link_.took_locked(rc, "posting a receive")) return false;
    track_locked(op);
    ++in.posted;
  }
  return true;
}

Status FabricReceiver::check_head(const uint8_t* head, size_t len, wire::FrameHeader& h) const {
  const std::string from = link_.name() + ": frame from rank " + std::to_string(link_.peer().rank) + ": ";
  if (len < kHeaderBytes) return unavailable_error(from + "a head message of " + std::to_string(len) + " bytes");
  std::memcpy(&h, head, kHeaderBytes);
  OMNIB_RETURN_IF_ERROR(validate_header(h, link_.core().job_id(), link_.peer().rank));
  const bool inline_payload = h.length <= fw::kInlinePayload;
  if (len != kHeaderBytes + (inline_payload ? h.length : 0) ||
      fw::rest_parts(h.length, link_.endpoint().max_message_bytes()) > fw::kMaxRestParts)
    return unavailable_error(from + "a head message of " + std::to_string(len) + " bytes for a payload of " +
                             std::to_string(h.length));
  return Status::ok();
}

void FabricReceiver::on_head_locked(FabricOp& op, size_t len) {
  forget_locked(op);
  struct GiveBack {
    FabricEndpoint& ep;
    SlotPool::Slot slot;
    ~GiveBack() { ep.give_back(slot); }
  } give_back{link_.endpoint(), op.slot};
  if (link_.core().failed_locked() || op.arg < delivered_) return;
  Incoming& in = arriving_[op.arg - delivered_];
  ++heads_seen_;
  wire::FrameHeader h;
  Status valid = check_head(op.slot.data, len, h);
  if (!valid.is_ok()) return link_.fail_locked(valid);
  in.frame.header = h;
  link_.core().size_payload_locked(in.frame.payload, h.length);
  if (h.length <= fw::kInlinePayload) {
    if (h.length) std::memcpy(in.frame.payload.data(), op.slot.data + kHeaderBytes, h.length);
    in.state = Incoming::State::kComplete;
    deliver_locked();
    return;
  }
  Status ready = expect_rest_locked(in);
  if (!ready.is_ok()) return link_.fail_locked(ready);
  post_rest_receives_locked(in, op.arg);
  link_.credits().maybe_send_credit_locked();
}

Status FabricReceiver::expect_rest_locked(Incoming& in) {
  in.state = Incoming::State::kRest;
  in.parts = in.left = fw::rest_parts(in.frame.header.length, link_.endpoint().max_message_bytes());
  if (!mr_local_) return Status::ok();
  if (!spare_bounce_.empty()) {
    in.bounce = std::move(spare_bounce_.back());
    spare_bounce_.pop_back();
  }
  in.bounce.bytes().resize(in.frame.header.length);
  Status reg = in.bounce.ensure_registered(link_.endpoint().registrar());
  return reg.is_ok() ? reg : reg.with_context(link_.name() + ": ");
}

void FabricReceiver::on_rest_locked(FabricOp& op, size_t len) {
  forget_locked(op);
  const uint64_t frame = op.arg >> 4;
  const auto part = static_cast<uint32_t>(op.arg & 0xf);
  if (link_.core().failed_locked() || frame < delivered_) return;
  Incoming& in = arriving_[frame - delivered_];
  const size_t expected = fw::rest_part_bytes(in.frame.header.length, part, link_.endpoint().max_message_bytes());
  if (len != expected)
    return link_.fail_locked(unavailable_error(link_.name() + ": frame from rank " + std::to_string(link_.peer().rank) +
                                               ": " + std::to_string(len) + " payload bytes where its header announced " +
                                               std::to_string(expected)));
  if (--in.left > 0) return;
  if (mr_local_) {
    std::memcpy(in.frame.payload.data(), in.bounce.bytes().data(), in.frame.header.length);
    if (spare_bounce_.size() < link_.core().recv_window_locked()) spare_bounce_.push_back(std::move(in.bounce));
  }
  in.state = Incoming::State::kComplete;
  deliver_locked();
}

void FabricReceiver::deliver_locked() {
  bool any = false;
  while (!arriving_.empty() && arriving_.front().state == Incoming::State::kComplete) {
    link_.core().deliver_locked(std::move(arriving_.front().frame));
    arriving_.pop_front();
    ++delivered_;
    any = true;
  }
  if (!any) return;
  link_.core().notify_locked(true, false);
  link_.credits().maybe_send_credit_locked();
  fail_when_peer_done_locked();
}

void FabricReceiver::peer_closed_locked(uint64_t frames) {
  // Its last frames may still be arriving (the notice can overtake the
  // rest of one): they are delivered first, as TCP reads up to the FIN.
  peer_closed_after_ = frames;
  fail_when_peer_done_locked();
}

void FabricReceiver::fail_when_peer_done_locked() {
  if (!peer_closed_after_ || delivered_ < *peer_closed_after_) return;
  link_.fail_locked(unavailable_error(link_.name() + ": rank " + std::to_string(link_.peer().rank) +
                                      " closed the link (did it fail, abort or exit?)"));
}

void FabricReceiver::cancel_receives_locked() {
  for (FabricOp* op : receives_) link_.endpoint().cancel(op);
  receives_.clear();
}

}  // namespace omnib
