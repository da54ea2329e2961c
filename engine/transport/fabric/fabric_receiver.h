// The frames a fabric link receives. It keeps a head receive posted for each
// frame it lets the peer send (the frame grant: the receive window, plus,
// with a byte budget, heads for the small frames the budget may hold); a
// head says how long its payload is, and the rest of the payload is then
// received straight into a reused buffer (or, where the provider needs
// local registration, into a registered bounce buffer, then copied). Frames
// go to the ConnectionCore's inbox in order, once whole.
//
// A peer that closed says how many frames it sent whole: those are
// delivered (they may still be arriving) before the link fails.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/transport/connection_core.h"
#include "engine/transport/fabric/fabric_endpoint.h"

namespace omnib {

class FabricLink;

class FabricReceiver {
 public:
  explicit FabricReceiver(FabricLink& link);

  // ---- mu held.
  // Posts the head receives of the grant, and the rest receives of heads
  // that arrived.
  void post_receives_locked();
  void on_head_locked(FabricOp& op, size_t len);
  void on_rest_locked(FabricOp& op, size_t len);
  // The peer closed after sending `frames` whole.
  void peer_closed_locked(uint64_t frames);
  bool peer_closed() const { return peer_closed_after_.has_value(); }
  // What a receive that timed out saw of the next frame (empty: nothing).
  std::string partial_frame_locked() const;

  // Frames the peer may send beyond those taken: the receive window, plus,
  // with a byte budget, head receives for the small frames it may hold.
  uint64_t grant_window_locked() const;
  // The frame grant once every head receive is posted.
  uint64_t grant_target_locked() const;
  uint64_t granted() const { return granted_; }
  uint64_t heads_seen() const { return heads_seen_; }
  uint64_t delivered() const { return delivered_; }

  // Posted receives (the link's control receives too), to cancel on failure.
  void track_locked(FabricOp* op) { receives_.insert(op); }
  void forget_locked(FabricOp& op) { receives_.erase(&op); }
  void cancel_receives_locked();

 private:
  struct Incoming {
    enum class State { kHead, kRest, kComplete };
    State state = State::kHead;
    Frame frame;
    RegisteredBytes bounce;  // local registration: the rest lands here first
    uint32_t parts = 0, posted = 0, left = 0;
  };

  bool post_head_receive_locked();
  bool post_rest_receives_locked(Incoming& in, uint64_t frame);
  // Checks a head message of `len` bytes; its header into `h`.
  Status check_head(const uint8_t* head, size_t len, wire::FrameHeader& h) const;
  // Sizes the payload (and bounce buffer) of a frame whose rest follows.
  Status expect_rest_locked(Incoming& in);
  void deliver_locked();
  // Fails the link once the frames a closing peer sent whole are delivered.
  void fail_when_peer_done_locked();

  FabricLink& link_;
  const bool mr_local_;
  // Frames [taken, granted_) have a head receive posted or arrived;
  // [delivered_, granted_) are in arriving_, the rest in the core's inbox.
  uint64_t delivered_ = 0, granted_ = 0, heads_seen_ = 0;
  std::deque<Incoming> arriving_;
  std::vector<RegisteredBytes> spare_bounce_;
  std::optional<uint64_t> peer_closed_after_;  // frames the peer sent whole before it closed
  std::unordered_set<FabricOp*> receives_;
};

}  // namespace omnib
