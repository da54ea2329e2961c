// A worker's receive lane in the omni engine (shards route): every shard's
// result batches, decoded and written into the output as they arrive, until
// every shard's stream has ended. It also counts what the route choice needs
// to know of the call (route_choice.h): the result streams, and what every
// shard says its workers sent it.
//
// Threads: run() on one lane.
#pragma once

#include <chrono>
#include <vector>

#include "engine/omni/block_batch.h"
#include "engine/omni/omni_call.h"
#include "engine/omni/omni_peers.h"
#include "engine/omni/route_choice.h"
#include "engine/omni/worker_block_io.h"
#include "engine/transport/waker.h"

namespace omnib {

class WorkerReceiver {
 public:
  WorkerReceiver(OmniPeers& peers, WorkerBlockIo& io, std::chrono::milliseconds timeout);

  // Waits on `waker`, which the links to the shards tell of arrived frames.
  Status run(const OmniCall& call, Waker& waker);
  // The call's traffic as this worker saw it (complete once run() returned).
  const RouteTraffic& traffic() const { return traffic_; }

 private:
  // Takes what shard s's link holds; `ended` once its last batch is stored.
  Status take_results(const OmniCall& call, int s, bool& moved);

  OmniPeers& peers_;
  WorkerBlockIo& io_;
  const std::chrono::milliseconds timeout_;
  RouteTraffic traffic_;
  std::vector<char> ended_;    // per shard in use
  int remaining_ = 0;          // shards whose stream has not ended
  std::vector<Frame> frames_;  // one per shard, kept between calls
  BatchView view_;
};

}  // namespace omnib
