// The control messages of a fabric link (fabric_wire.h's Control): the
// credits this end grants its peer (frames it may send, and the byte budget
// of byte_budget.h) and those the peer grants this end, and the closing
// notice. Credits are cumulative and go out in batches: frames when a
// quarter of the grant is new, or when the peer has used every credit it
// had (it may be waiting); bytes by the budget's rule. At most one credit
// is in flight at a time. Like TCP's window updates, control messages are
// transport overhead, not counted in the connection's counters.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/transport/fabric/fabric_endpoint.h"
#include "engine/transport/fabric/fabric_wire.h"

namespace omnib {

class FabricLink;

class FabricCredits {
 public:
  explicit FabricCredits(FabricLink& link) : link_(link) {}

  // ---- mu held.
  // Keeps the receives for the peer's control messages posted. False when
  // the provider could not take one now (or the link failed).
  bool post_control_receives_locked();
  // Whether a credit granting `grant` frames is worth a message now.
  bool credit_due_locked(uint64_t grant) const;
  // Sends a credit for the grant posted so far, when one is due.
  void maybe_send_credit_locked();
  // Tells the peer this end closed, after the frames it sent whole. True
  // when the provider took the notice.
  bool send_close_locked();
  void on_control_locked(FabricOp& op, size_t len);
  // A control send finished or failed.
  void on_sent_locked(FabricOp& op);

 private:
  bool send_control_locked(fabric_wire::ControlType type);

  FabricLink& link_;
  size_t control_receives_ = 0;
  bool credit_in_flight_ = false;
  uint64_t advertised_frames_ = 0;
};

}  // namespace omnib
