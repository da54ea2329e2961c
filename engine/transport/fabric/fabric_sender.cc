#include "engine/transport/fabric/fabric_sender.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/transport/fabric/fabric_link.h"
#include "engine/transport/transport_cpu.h"

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

FabricSender::FabricSender(FabricLink& link)
    : link_(link), mr_local_(link.endpoint().needs_local_registration()) {}

Result<std::optional<uint64_t>> FabricSender::post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                                   std::span<const iovec> parts, bool copy,
                                                   ConnectionCore::Clock::time_point deadline) {
  ConnectionCore& core = link_.core();
  const uint64_t max_message = link_.endpoint().max_message_bytes();
  uint64_t length = 0;
  size_t pieces = 0;
  for (const auto& p : parts) {
    length += p.iov_len;
    pieces += p.iov_len > 0;
  }
  if (length > wire::kMaxPayload || fw::rest_parts(length, max_message) > fw::kMaxRestParts)
    return internal_error(core.name() + ": a frame of " + std::to_string(length) + " payload bytes is over the limit");
  // The caller's memory goes to the provider as it is when the provider
  // needs no registration and takes the parts in one message; small
  // payloads are copied into the head anyway.
  const bool lend = !copy && (length <= fw::kInlinePayload || (!mr_local_ && pieces <= link_.endpoint().iov_limit() &&
                                                               fw::rest_parts(length, max_message) == 1));
  Outgoing o;
  {
    std::unique_lock lock(core.mu());
    if (copy) OMNIB_RETURN_IF_ERROR(core.wait_send_room_locked(lock, deadline));
    if (core.failed_locked()) return core.failure_locked();
    if (core.send_window_full_locked()) return std::optional<uint64_t>();
    if (!lend && !spare_staging_.empty()) {
      o.staging = std::move(spare_staging_.back());
      spare_staging_.pop_back();
    }
  }
  // One sender at a time (the Connection rule): the window only grows meanwhile.
  o.header = make_header(type, core.job_id(), tag, seq, length);
  fill(o, parts, lend);
  uint64_t ticket;
  {
    std::lock_guard lock(core.mu());
    if (core.failed_locked()) return core.failure_locked();
    o.ticket = core.next_ticket_locked();
    (o.copied ? paths_.copied : paths_.zero_copy)++;
    core.count_sent(o.bytes(), 1);
    ticket = o.ticket;
    outbox_.push_back(std::move(o));
  }
  link_.pump_soon();
  return std::optional<uint64_t>(ticket);
}

void FabricSender::fill(Outgoing& o, std::span<const iovec> parts, bool lend) {
  if (lend) {
    for (const auto& p : parts)
      if (p.iov_len) o.parts.push_back(p);
    return;
  }
  TransportWork work;  // the copy a socket's write makes in the kernel
  const uint64_t length = o.header.length;
  o.staging.bytes().resize(length);
  gather(parts, o.staging.bytes().data());
  if (length) o.parts.push_back({o.staging.bytes().data(), length});
  o.copied = true;
}

FabricSendPaths FabricSender::paths() const {
  std::lock_guard lock(link_.core().mu());
  return paths_;
}

void FabricSender::wait_lent_memory(ConnectionCore::Clock::time_point deadline) {
  std::unique_lock lock(link_.core().mu());
  link_.core().wait_locked(lock, deadline, [&] { return lent_messages_ == 0; });
}

void FabricSender::wait_sends_done(ConnectionCore::Clock::time_point deadline) {
  ConnectionCore& core = link_.core();
  std::unique_lock lock(core.mu());
  core.wait_locked(lock, deadline, [&] { return core.failed_locked() || core.done_locked() == core.posted_locked(); });
}

void FabricSender::start_waiting_locked() {
  while (started_ < outbox_.size() && start_next_locked()) {
  }
}

void FabricSender::granted_locked(uint64_t frames) { peer_frames_ = std::max(peer_frames_, frames); }

bool FabricSender::start_next_locked() {
  Outgoing& o = outbox_[started_];
  if (o.messages == 0 && !begin_locked(o)) return false;
  while (o.posted < o.messages) {
    const ssize_t rc = o.posted == 0 ? post_head_locked(o) : post_rest_locked(o, o.posted - 1);
    if (!link_.took_locked(rc, "sending")) return false;
    ++o.posted;
  }
  ++started_;
  return true;
}

bool FabricSender::begin_locked(Outgoing& o) {
  SendBudget& budget = link_.core().send_budget_locked();
  if (next_frame_ >= peer_frames_ || !budget.allows(o.bytes())) return false;
  if (o.copied) {
    Status reg = o.staging.ensure_registered(link_.endpoint().registrar());
    if (!reg.is_ok()) {
      link_.fail_locked(reg.with_context(link_.name() + ": "));
      return false;
    }
  }
  o.frame = next_frame_++;
  budget.start(o.bytes());
  o.messages = 1 + fw::rest_parts(o.header.length, link_.endpoint().max_message_bytes());
  return true;
}

ssize_t FabricSender::post_head_locked(Outgoing& o) {
  FabricEndpoint& ep = link_.endpoint();
  auto slot = ep.take_slot();
  if (!slot.is_ok()) {
    link_.fail_locked(slot.status().with_context(link_.name() + ": "));
    return -FI_ENOMEM;
  }
  uint8_t* head = slot.value().data;
  std::memcpy(head, &o.header, kHeaderBytes);
  const bool inline_payload = o.header.length <= fw::kInlinePayload;
  if (inline_payload) gather(o.parts, head + kHeaderBytes);
  iovec iov{head, kHeaderBytes + (inline_payload ? o.header.length : 0)};
  void* desc = slot.value().desc;
  FabricOp* op = ep.make_op(link_.self(), FabricLink::kHeadSend, o.ticket, slot.value());
  const ssize_t rc =
      ep.send(op, link_.peer().addr, fw::tag(fw::Kind::kHead, link_.peer().peer_conn, o.frame), &iov, &desc, 1);
  if (rc != 0) ep.give_back(slot.value());
  return rc;
}

ssize_t FabricSender::post_rest_locked(Outgoing& o, uint32_t part) {
  FabricEndpoint& ep = link_.endpoint();
  FabricOp* op = ep.make_op(link_.self(), FabricLink::kRestSend, o.ticket);
  const uint64_t tag = fw::tag(fw::Kind::kRest, link_.peer().peer_conn, o.frame, part);
  if (o.copied) {
    const uint64_t max_message = ep.max_message_bytes();
    const size_t offset = static_cast<size_t>(uint64_t{part} * max_message);
    iovec iov{o.staging.bytes().data() + offset, fw::rest_part_bytes(o.header.length, part, max_message)};
    void* desc = o.staging.desc();
    return ep.send(op, link_.peer().addr, tag, &iov, &desc, 1);
  }
  std::vector<void*> descs(o.parts.size(), nullptr);
  const ssize_t rc = ep.send(op, link_.peer().addr, tag, o.parts.data(), descs.data(), o.parts.size());
  if (rc == 0) ++lent_messages_;
  return rc;
}

FabricSender::Outgoing* FabricSender::outgoing_locked(uint64_t ticket) {
  if (outbox_.empty() || ticket < outbox_.front().ticket || ticket - outbox_.front().ticket >= outbox_.size())
    return nullptr;
  return &outbox_[ticket - outbox_.front().ticket];
}

void FabricSender::release_locked(FabricOp& op, Outgoing* o) {
  if (op.kind == FabricLink::kRestSend && o && !o->copied) {
    --lent_messages_;
    link_.core().wake_waiters_locked();
  }
  if (op.slot.data) link_.endpoint().give_back(op.slot);
}

void FabricSender::on_done_locked(FabricOp& op) {
  Outgoing* o = outgoing_locked(op.arg);
  release_locked(op, o);
  if (!o) return;
  ++o->finished;
  ConnectionCore& core = link_.core();
  const uint64_t before = core.done_locked();
  while (started_ > 0 && outbox_.front().finished == outbox_.front().messages) {
    Outgoing& front = outbox_.front();
    core.sends_finished_locked(front.ticket);
    if (front.copied && spare_staging_.size() < core.send_window_locked())
      spare_staging_.push_back(std::move(front.staging));
    outbox_.pop_front();
    --started_;
  }
  core.notify_locked(false, core.done_locked() != before);
}

void FabricSender::on_failed_locked(FabricOp& op) { release_locked(op, outgoing_locked(op.arg)); }

}  // namespace omnib
