// The state of one fabric link, shared by its FabricConnection (the calls
// of the Connection API, on any thread) and whoever holds the endpoint's
// API lock (every libfabric call, and the completions): its progress
// thread, or a lane that posts or takes a frame (fabric_endpoint.h). The endpoint keeps it alive
// while any of its operations is out, so the Connection may go first.
//
// Its jobs, one class each: the frames it sends (fabric_sender.h), the
// frames it receives (fabric_receiver.h), and the credits and closing
// notice that pass between the ends (fabric_credits.h). The link holds the
// ConnectionCore they share, routes completions to them, and fails or
// closes the link. The protocol is in fabric_wire.h.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "engine/transport/connection_core.h"
#include "engine/transport/fabric/fabric_credits.h"
#include "engine/transport/fabric/fabric_endpoint.h"
#include "engine/transport/fabric/fabric_receiver.h"
#include "engine/transport/fabric/fabric_sender.h"

namespace omnib {

class FabricLink final : public FabricOpOwner,
                         public std::enable_shared_from_this<FabricLink>,
                         private ConnectionCore::Hooks {
 public:
  // What each op of the link is; the owner's field of the op says it.
  enum OpKind : uint32_t { kHeadRecv = 1, kRestRecv, kControlRecv, kHeadSend, kRestSend, kControlSend };

  FabricLink(std::shared_ptr<FabricEndpoint> endpoint, const FabricPeer& peer, uint32_t job_id,
             std::chrono::milliseconds timeout);

  // Grants the first credits (any thread, once).
  void start() { schedule_pump(); }

  // ---- The Connection API (any thread).
  ConnectionCore& core() { return core_; }
  FabricSender& sender() { return sender_; }
  // Fails the link and tells the peer. `why` is what later calls report.
  void close(const std::string& why);

  // ---- Its parts (mu held).
  FabricEndpoint& endpoint() { return *ep_; }
  const FabricPeer& peer() const { return peer_; }
  const std::string& name() const { return core_.name(); }
  FabricCredits& credits() { return credits_; }
  FabricReceiver& receiver() { return receiver_; }
  std::shared_ptr<FabricLink> self() { return shared_from_this(); }
  // Asks the progress thread to do what is pending.
  void schedule_pump();
  // Does what is pending on this thread when the endpoint's API lock is
  // free, else asks the progress thread. mu not held.
  void pump_soon();
  // pump_soon(), when a frame taken made a credit due. mu not held.
  void pump_if_asked() {
    if (pump_asked_.exchange(false)) pump_soon();
  }
  // Fails the link; the progress thread then cancels the posted receives.
  void fail_locked(Status why);
  // True when the provider took an op (rc 0). Otherwise false, and: after
  // -FI_EAGAIN, a pump is due once progress was made; else the link fails.
  bool took_locked(ssize_t rc, const char* what);
  // Posts what waits: receives, a credit due, frames the peer has credit for.
  void go_on_locked();

  // ---- Under the endpoint's API lock (its progress thread, or a lane).
  void on_done(FabricOp& op, size_t len, uint64_t tag) override;
  void on_failed(FabricOp& op, bool canceled, const std::string& why) override;
  void pump() override;

 private:
  void frame_taken_locked(size_t held_before) override;
  std::string partial_frame_locked() const override { return receiver_.partial_frame_locked(); }
  void windows_changed_locked() override;

  const std::shared_ptr<FabricEndpoint> ep_;
  const FabricPeer peer_;
  std::atomic<bool> pump_queued_{false};
  std::atomic<bool> pump_asked_{false};  // by a frame taken, for the caller that took it
  ConnectionCore core_;
  bool closing_ = false;  // this end closed or aborted: tell the peer
  bool close_sent_ = false;
  FabricSender sender_;
  FabricReceiver receiver_;
  FabricCredits credits_;
};

}  // namespace omnib
