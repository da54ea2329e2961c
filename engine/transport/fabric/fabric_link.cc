#include "engine/transport/fabric/fabric_link.h"

#include <rdma/fi_errno.h>

namespace omnib {

FabricLink::FabricLink(std::shared_ptr<FabricEndpoint> endpoint, const FabricPeer& peer, uint32_t job_id,
                       std::chrono::milliseconds timeout)
    : ep_(std::move(endpoint)),
      peer_(peer),
      core_(*this, "fabric link to rank " + std::to_string(peer.rank), peer.rank, job_id, timeout),
      sender_(*this),
      receiver_(*this),
      credits_(*this) {}

void FabricLink::schedule_pump() { ep_->run_pump(shared_from_this(), pump_queued_); }

void FabricLink::pump_soon() {
  if (!ep_->pump_here(*this)) schedule_pump();
}

void FabricLink::fail_locked(Status why) {
  if (core_.failed_locked()) return;
  core_.fail_locked(std::move(why));
  schedule_pump();  // cancels the posted receives
}

bool FabricLink::took_locked(ssize_t rc, const char* what) {
  if (rc == 0) return true;
  if (rc == -FI_EAGAIN)
    ep_->retry_later(shared_from_this());
  else
    fail_locked(unavailable_error(name() + ": " + what + " failed: " + ep_->error_text(rc)));
  return false;
}

void FabricLink::frame_taken_locked(size_t) {
  // The freed head receive is posted with the next completion anyway; a
  // credit due is sent by the caller that took the frame, once it let go
  // of mu (FabricConnection's recv and try_recv: pump_if_asked).
  if (credits_.credit_due_locked(receiver_.grant_target_locked())) pump_asked_ = true;
}

void FabricLink::windows_changed_locked() {
  core_.notify_locked(false, true);  // a wider send window lets a waiting sender on
  schedule_pump();
}

void FabricLink::close(const std::string& why) {
  std::lock_guard lock(core_.mu());
  closing_ = true;
  fail_locked(unavailable_error(name() + ": " + why));
  schedule_pump();
}

void FabricLink::go_on_locked() {
  if (credits_.post_control_receives_locked()) receiver_.post_receives_locked();
  credits_.maybe_send_credit_locked();
  sender_.start_waiting_locked();
}

void FabricLink::pump() {
  std::lock_guard lock(core_.mu());
  if (core_.failed_locked()) {
    if (closing_ && !close_sent_) close_sent_ = credits_.send_close_locked();
    receiver_.cancel_receives_locked();
    return;
  }
  go_on_locked();
}

void FabricLink::on_done(FabricOp& op, size_t len, uint64_t) {
  std::lock_guard lock(core_.mu());
  switch (op.kind) {
    case kHeadSend:
    case kRestSend:
      sender_.on_done_locked(op);
      break;
    case kControlSend:
      credits_.on_sent_locked(op);
      break;
    case kHeadRecv:
      receiver_.on_head_locked(op, len);
      break;
    case kRestRecv:
      receiver_.on_rest_locked(op, len);
      break;
    case kControlRecv:
      credits_.on_control_locked(op, len);
      break;
  }
  // Completions free credits and windows: go on with what waits. The heads
  // freed by frames taken meanwhile are posted before a credit is weighed
  // (try_recv leaves both to this thread unless a credit was due).
  if (!core_.failed_locked()) go_on_locked();
}

void FabricLink::on_failed(FabricOp& op, bool canceled, const std::string& why) {
  std::lock_guard lock(core_.mu());
  const bool is_send = op.kind == kHeadSend || op.kind == kRestSend || op.kind == kControlSend;
  if (op.kind == kControlSend)
    credits_.on_sent_locked(op);
  else if (is_send)
    sender_.on_failed_locked(op);
  else if (op.slot.data)
    ep_->give_back(op.slot);
  if (!is_send) receiver_.forget_locked(op);
  // A peer that closed may be gone before a credit reaches it: no failure
  // of ours, and the frames it sent whole are still to be delivered.
  if (canceled || (op.kind == kControlSend && receiver_.peer_closed())) return;
  const std::string peer = "rank " + std::to_string(peer_.rank);
  if (is_send)
    fail_locked(unavailable_error(name() + ": sending to " + peer + " failed: " + why + " (did the peer die?)"));
  else
    fail_locked(unavailable_error(name() + ": receiving from " + peer + " failed: " + why));
}

}  // namespace omnib
