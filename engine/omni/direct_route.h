// The omni engine's direct route, on every rank (route_choice.h): every
// worker's whole stream is taken in and summed here, in rank order like a
// shard's, and written into this rank's output as it is summed, so that
// every rank gets the same bits without a result stream. The sends are the
// worker's own send lane (WorkerSender), on a lane of their own or, where
// the host's cores are few, on this one (direct_lanes.h).
//
// In place, a sum may overwrite a worker's block only once every peer has
// been sent it: sums above WorkerSender::unsent_from() wait in `held_`,
// never blocking (the peers' sends wait on this rank taking their input).
//
// Threads: run() or run_with_sends() on one lane.
#pragma once

#include <chrono>
#include <deque>
#include <vector>

#include "engine/omni/block_batch.h"
#include "engine/omni/omni_call.h"
#include "engine/omni/omni_peers.h"
#include "engine/omni/route_choice.h"
#include "engine/omni/shard_aggregator.h"
#include "engine/omni/worker_block_io.h"
#include "engine/omni/worker_sender.h"
#include "engine/transport/waker.h"

namespace omnib {

class DirectRoute {
 public:
  // `aggregator` is the rank's shard's (ShardServer::aggregator).
  DirectRoute(OmniPeers& peers, WorkerBlockIo& io, ShardAggregator& aggregator, WorkerSender& sender,
              std::chrono::milliseconds timeout);

  // The aggregation alone, beside the sender's own lane; waits on `waker`,
  // which the links from the workers and the sender tell.
  Status run(const OmniCall& call, Waker& waker, bool count_traffic);
  // Both roles on this lane: sending first, since every peer waits on this
  // rank's batches, summing whenever the sends cannot move. Every link of
  // the call must tell `waker`. The sender's begin() has been called.
  Status run_with_sends(const OmniCall& call, Waker& waker, bool count_traffic);

  // The call's traffic (complete once a run returned): the workers' streams
  // as they arrived, and the sums sized as the shards route would have
  // sent them (only when counting, i.e. under --route auto).
  const RouteTraffic& traffic() const { return traffic_; }

 private:
  Status begin(const OmniCall& call, bool count_traffic);
  // One pass: what arrived, one batch of sums, and the held sums the sends
  // no longer need. Sets aggregated_ once every stream is summed and stored.
  Status round(bool& moved);
  // Sums one batch, straight into the output (out of place in host memory)
  // or into a batch held for store_ready.
  Status reduce(bool& moved);
  Status store_ready();
  Status store(const ResultBatch& batch);
  // Sizes the sums at `sums_at` (or, when null, in batch.values) as the
  // shards route would send them (traffic_.results).
  void count_results(const ResultBatch& batch, const uint8_t* sums_at);
  // Before a wait: only a link the aggregation still needs can fail it.
  Status links_health() const;

  OmniPeers& peers_;
  WorkerBlockIo& io_;
  ShardAggregator& aggregator_;
  WorkerSender& sender_;
  const std::chrono::milliseconds timeout_;
  const OmniCall* call_ = nullptr;

  bool count_traffic_ = false;
  RouteTraffic traffic_;
  std::vector<char> input_ended_;  // per worker: its stream has ended
  uint8_t* sums_at_ = nullptr;     // the output the sums go into, if not held
  bool reduced_ = false;           // the last sums are made
  bool aggregated_ = false;        // and stored
  ResultBatch batch_;
  std::deque<ResultBatch> held_;
  std::vector<ResultBatch> spare_results_;
  BatchView view_;  // a held batch, as store() hands it to the block IO
};

}  // namespace omnib
