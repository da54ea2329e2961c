// Helpers the builders share: the frames of a stream on one link, kept in
// order by a window (a message waits for the arrival of the one `window`
// before it on its link, as a sender waits for credit), and a rank's
// fan-out to many peers, paced when FlowLimits says so.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
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
// (they all go at once, as the protocols send them); paced, message k
// starts once message k - lanes has left the sender (its latency still to
// come): `lanes` of them move bytes at once, the rest wait their turn
// (FlowLimits::paced_lanes says what that trades).
class PacedFanOut {
 public:
  PacedFanOut(bool pace, size_t lanes) : pace_(pace), last_(pace ? std::max<size_t>(1, lanes) : 0) {}
  void deps_for_next(std::vector<MessageDep>& deps) const {
    if (pace_ && sent_ >= last_.size()) deps.push_back({last_[sent_ % last_.size()], true});
  }
  void sent(uint32_t id) {
    if (!pace_) return;
    last_[sent_ % last_.size()] = id;
    ++sent_;
  }

 private:
  bool pace_;
  std::vector<uint32_t> last_;  // the last `lanes` messages, a ring
  size_t sent_ = 0;
};

// The peers of `rank` among `ranks` in the order a paced fan-out visits
// them: rank+1, rank+2, ... wrapping round (so at any moment the senders
// of a symmetric exchange all aim at different receivers).
inline int rotated_peer(int rank, int ranks, int k) { return (rank + 1 + k) % ranks; }

}  // namespace omnib
