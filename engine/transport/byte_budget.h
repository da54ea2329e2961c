// The byte budget a receiver gives its sender, which both transports' credits
// carry (docs/wire-format.md, "Credits on TCP links" and "Fabric links").
//
// The sender keeps the frame bytes it starts within what the receiver's
// reader took or holds in its window plus the budget; it goes past that only
// while at most a quarter of the budget is unread, so a frame larger than
// what is left still goes. The receiver tells its count again when a quarter
// of the budget was read since it last did, or when it read something and
// more than a quarter arrived unadvertised while no frame is half received
// (its sender may be held back); and whenever the budget itself changed.
#pragma once

#include <cstdint>

namespace omnib {

// The sending end: the frame bytes it started, and the receiver's latest credit.
class SendBudget {
 public:
  // Whether a frame of `frame_bytes` (header included) may start now.
  bool allows(uint64_t frame_bytes) const {
    if (peer_budget_ == 0) return true;
    return started_ + frame_bytes <= peer_read_ + peer_budget_ || started_ <= peer_read_ + peer_budget_ / 4;
  }
  void start(uint64_t frame_bytes) { started_ += frame_bytes; }
  uint64_t started() const { return started_; }

  // Takes a credit (they are cumulative: an older one changes nothing).
  // False when it claims more bytes read than were started: a corrupt peer.
  bool take(uint64_t bytes_read, uint64_t budget) {
    if (bytes_read > started_) return false;
    if (bytes_read > peer_read_ || budget != peer_budget_) ++credits_that_moved_;
    if (bytes_read > peer_read_) peer_read_ = bytes_read;
    peer_budget_ = budget;
    return true;
  }
  // Counts the credits that changed what may start.
  uint64_t credits_that_moved() const { return credits_that_moved_; }

 private:
  uint64_t started_ = 0;
  uint64_t peer_read_ = 0;
  uint64_t peer_budget_ = 0;  // 0: the receiver set no budget
  uint64_t credits_that_moved_ = 0;
};

// The receiving end: its budget, and what it last told its sender.
class ReceiveBudget {
 public:
  void set(uint64_t budget) { budget_ = budget; }
  uint64_t budget() const { return budget_; }

  // Whether a credit is due. `read`: the frame bytes the reader took or
  // holds in its window; `arrived`: the frame bytes that arrived whole;
  // `idle`: no frame is half received.
  bool due(uint64_t read, uint64_t arrived, bool idle) const {
    if (budget_ != advertised_budget_) return true;
    if (budget_ == 0 || read <= advertised_read_) return false;  // links without a budget skip the count
    const uint64_t quarter = budget_ / 4;
    return read - advertised_read_ >= quarter || (idle && arrived - advertised_read_ > quarter);
  }
  // A credit saying `read` (and the budget) went out.
  void advertised(uint64_t read) {
    advertised_read_ = read;
    advertised_budget_ = budget_;
  }

 private:
  uint64_t budget_ = 0;  // 0: no limit
  uint64_t advertised_read_ = 0;
  uint64_t advertised_budget_ = 0;
};

}  // namespace omnib
