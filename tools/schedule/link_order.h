// Helpers the builders share: the frames of a stream on one link, kept in
// order by a window (a message waits for the arrival of the one `window`
// before it on its link, as a sender waits for credit), and a rank's
// fan-out to many peers, paced when FlowLimits says so.
#pragma once

#include <cstdint>
#include <vector>

#include "tools/schedule/message_schedule.h"

namespace omnib {

// Messages sent on one link so far, for its window.
class LinkWindow {
 public:
  explicit LinkWindow(size_t window) : window_(window) {}
  // Appends to `deps` what the next message on the link waits for.
  void deps_for_next(std::vector<MessageDep>& deps) const {
    if (sent_.size() >= window_) deps.push_back({sent_[sent_.size() - window_], false});
  }
  void sent(uint32_t id) { sent_.push_back(id); }

 private:
  size_t window_;
  std::vector<uint32_t> sent_;
};

// A rank's messages of one fan-out to its peers. Unpaced it adds nothing
// (they all go at once, as the protocols send them); paced, each starts
// once the one before has left the sender's link at line rate, and at most
// FlowLimits::paced_window of them are unfinished (a link shared with
// another fan-out falls behind the pace; unbounded, its flows would pile up).
class PacedFanOut {
 public:
  PacedFanOut(bool pace, size_t window) : pace_(pace), window_(window), last_(window, 0) {}
  void deps_for_next(std::vector<MessageDep>& deps) const {
    if (!pace_ || sent_ == 0) return;
    deps.push_back({last_[(sent_ - 1) % window_], true});
    if (sent_ >= window_) deps.push_back({last_[sent_ % window_], false});
  }
  void sent(uint32_t id) {
    if (!pace_) return;
    last_[sent_ % window_] = id;
    ++sent_;
  }

 private:
  bool pace_;
  size_t window_;
  std::vector<uint32_t> last_;  // the last `window_` messages, a ring
  size_t sent_ = 0;
};

// The peers of `rank` among `ranks` in the order a paced fan-out visits
// them: rank+1, rank+2, ... wrapping round (so at any moment the senders
// of a symmetric exchange all aim at different receivers).
inline int rotated_peer(int rank, int ranks, int k) { return (rank + 1 + k) % ranks; }

}  // namespace omnib
