#include "engine/transport/fabric/fabric_credits.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/transport/fabric/fabric_link.h"

namespace omnib {

namespace fw = fabric_wire;

namespace {

// Control messages the link keeps a receive posted for: a credit and a
// closing notice may be on their way at once.
constexpr size_t kControlReceives = 2;

}  // namespace

bool FabricCredits::post_control_receives_locked() {
  FabricEndpoint& ep = link_.endpoint();
  while (control_receives_ < kControlReceives) {
    auto slot = ep.take_slot();
    if (!slot.is_ok()) {
      link_.fail_locked(slot.status().with_context(link_.name() + ": "));
      return false;
    }
    FabricOp* op = ep.make_op(link_.self(), FabricLink::kControlRecv, 0, slot.value());
    const ssize_t rc = ep.recv(op, link_.peer().addr, fw::tag(fw::Kind::kControl, link_.peer().my_conn), 0,
                               slot.value().data, sizeof(fw::Control), slot.value().desc);
    if (rc != 0) ep.give_back(slot.value());
    if (!link_.took_locked(rc, "posting a receive")) return false;
    link_.receiver().track_locked(op);
    ++control_receives_;
  }
  return true;
}

bool FabricCredits::credit_due_locked(uint64_t grant) const {
  const FabricReceiver& receiver = link_.receiver();
  ConnectionCore& core = link_.core();
  if (credit_in_flight_ || core.failed_locked() || receiver.peer_closed()) return false;
  const uint64_t batch = std::max<uint64_t>(1, receiver.grant_window_locked() / 4);
  const bool frames_due = grant > advertised_frames_ &&
                          (grant - advertised_frames_ >= batch || receiver.heads_seen() >= advertised_frames_);
  const bool nothing_coming = receiver.heads_seen() == receiver.delivered();
  return frames_due ||
         core.receive_budget_locked().due(core.bytes_read_locked(), core.bytes_arrived_locked(), nothing_coming);
}

void FabricCredits::maybe_send_credit_locked() {
  const uint64_t granted = link_.receiver().granted();
  if (!credit_due_locked(granted)) return;
  credit_in_flight_ = send_control_locked(fw::ControlType::kCredit);
  if (!credit_in_flight_) return;
  advertised_frames_ = granted;
  link_.core().receive_budget_locked().advertised(link_.core().bytes_read_locked());
}

bool FabricCredits::send_close_locked() { return send_control_locked(fw::ControlType::kClose); }

bool FabricCredits::send_control_locked(fw::ControlType type) {
  FabricEndpoint& ep = link_.endpoint();
  ConnectionCore& core = link_.core();
  auto slot = ep.take_slot();
  if (!slot.is_ok()) {
    link_.fail_locked(slot.status().with_context(link_.name() + ": "));
    return false;
  }
  // A closing notice counts the frames sent whole: tickets are frames, in order.
  const uint64_t frames = type == fw::ControlType::kClose ? core.done_locked() : link_.receiver().granted();
  const fw::Control c{wire::kMagic, static_cast<uint32_t>(type), frames, core.bytes_read_locked(),
                      core.receive_budget_locked().budget()};
  std::memcpy(slot.value().data, &c, sizeof(c));
  iovec iov{slot.value().data, sizeof(c)};
  void* desc = slot.value().desc;
  FabricOp* op = ep.make_op(link_.self(), FabricLink::kControlSend, static_cast<uint64_t>(type), slot.value());
  const ssize_t rc = ep.send(op, link_.peer().addr, fw::tag(fw::Kind::kControl, link_.peer().peer_conn), &iov, &desc, 1);
  if (rc != 0) ep.give_back(slot.value());
  return link_.took_locked(rc, "sending");
}

void FabricCredits::on_sent_locked(FabricOp& op) {
  if (op.slot.data) link_.endpoint().give_back(op.slot);
  if (op.arg == static_cast<uint64_t>(fw::ControlType::kCredit)) credit_in_flight_ = false;
}

void FabricCredits::on_control_locked(FabricOp& op, size_t len) {
  link_.receiver().forget_locked(op);
  --control_receives_;
  fw::Control c{};
  std::memcpy(&c, op.slot.data, std::min(len, sizeof(c)));
  link_.endpoint().give_back(op.slot);
  if (link_.core().failed_locked()) return;
  if (len != sizeof(c) || c.magic != wire::kMagic)
    return link_.fail_locked(unavailable_error(link_.name() + ": rank " + std::to_string(link_.peer().rank) +
                                               " sent a malformed control message"));
  if (c.type == static_cast<uint32_t>(fw::ControlType::kClose)) return link_.receiver().peer_closed_locked(c.frames_granted);
  link_.sender().granted_locked(c.frames_granted);
  if (!link_.core().send_budget_locked().take(c.bytes_read, c.bytes_budget))
    link_.fail_locked(unavailable_error(link_.name() + ": rank " + std::to_string(link_.peer().rank) +
                                        " sent a credit for more bytes than were sent (a corrupt peer?)"));
}

}  // namespace omnib
