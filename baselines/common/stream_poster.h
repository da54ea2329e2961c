// Sends sparse streams (baselines/common/sparse_stream.h) on one link without
// blocking, for lanes that serve many links (engine/lanes/link_lane.h): each
// post_more() posts what the link's send window takes. The frames are
// those send_vector() would send, byte for byte.
//
// Memory: nothing is copied. The view's memory must stay unchanged until
// finished(); the chunk headers live here, one per unfinished frame.
//
// Threads: one lane uses a poster; the link may be received on by another.
#pragma once

#include <cstdint>
#include <vector>

#include "baselines/common/sparse_stream.h"

namespace omnib {

class StreamPoster {
 public:
  // Binds to `link` at the start of a collective, when every earlier post
  // on it is finished. The link must outlive the poster's use.
  void attach(Connection& link);

  // Begins the stream of v (tag, collective seq) after the previous one is
  // all posted.
  void start(uint32_t tag, uint64_t seq, const VectorView& v);

  // Posts the stream's next frames while the window has room. true: at
  // least one was posted. An error once the link failed.
  Result<bool> post_more();

  bool all_posted() const { return !streaming_; }
  // Every frame posted on the link so far has been handed to the transport:
  // the views they came from may be reused.
  bool finished() const { return link_->sends_done() >= last_ticket_; }
  Connection& link() const { return *link_; }

 private:
  Connection* link_ = nullptr;
  VectorView v_;
  uint32_t tag_ = 0;
  uint64_t seq_ = 0;
  size_t pos_ = 0;          // next item of v_ to post
  bool streaming_ = false;  // frames of v_ are left (an empty v_ still has one)
  uint64_t last_ticket_ = 0;
  // Header of ticket t at t % size: a slot is rewritten only once its
  // ticket is finished, since at most send_window() tickets are unfinished.
  std::vector<ChunkHeader> headers_;
};

}  // namespace omnib
