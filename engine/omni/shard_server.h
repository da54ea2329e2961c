// A shard's lane in the omni engine (shards route): it takes batches from
// every worker (at most a window each, so its memory is bounded whatever
// the tensor), reduces each block once every worker that holds it has
// delivered it (ShardAggregator), encodes the sums and streams them to every
// worker in order. A result batch stays in its slot until every worker's
// link has sent it.
//
// It owns the shard's ShardAggregator, which the direct route's aggregation
// borrows (every rank sums there as a shard of the whole tensor).
//
// Threads: run() on one lane.
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "engine/omni/block_batch.h"
#include "engine/omni/omni_call.h"
#include "engine/omni/omni_peers.h"
#include "engine/omni/shard_aggregator.h"
#include "engine/transport/waker.h"

namespace omnib {

class ShardServer {
 public:
  ShardServer(OmniPeers& peers, DType dtype, std::chrono::milliseconds timeout);

  // Before the call's lanes start: the aggregator starts afresh on the
  // call's tensor; `range_shapes` when the route choice needs them.
  void begin(const OmniCall& call, bool range_shapes);
  // Waits on `waker`, which the links from the workers tell of arrived
  // frames and finished sends.
  Status run(const OmniCall& call, Waker& waker);

  ShardAggregator& aggregator() { return aggregator_; }

 private:
  // One batch of sums goes to every worker: it stays until all have it.
  struct ResultSlot {
    ResultBatch batch;
    BatchHeader header{};
    UninitBytes packed;             // the batch in a sparse encoding, when that is smaller
    std::vector<uint64_t> tickets;  // per worker: the send of this batch
  };
  ResultSlot& slot_of(uint64_t k) { return slots_[k % slots_.size()]; }

  // Reduces the next result batch into a free slot, when there is one and
  // the inputs allow.
  Status reduce_into_slot(const OmniCall& call, bool& moved);
  // Picks the encoding of the slot's batch and, if sparse, packs it.
  Status encode_result(const OmniCall& call, ResultSlot& slot);
  // Posts made batches to every worker, each worker's in order.
  Status post_results(const OmniCall& call, bool& moved);
  // Frees the slots every worker has been sent.
  void retire_sent(bool& moved);
  // Before a wait: only a link this shard still needs can fail it (a
  // worker that has sent its stream and been sent every result may finish
  // and close its end while others are still served).
  Status owed_links_health() const;

  OmniPeers& peers_;
  const std::chrono::milliseconds timeout_;
  const int shard_;
  ShardAggregator aggregator_;
  std::vector<ResultSlot> slots_;
  std::vector<iovec> result_iov_;
  // This call's progress.
  std::vector<char> input_ended_;    // per worker: its stream has ended
  std::vector<uint64_t> next_post_;  // per worker: the batch it is sent next
  uint64_t produced_ = 0;            // result batches made
  uint64_t retired_ = 0;             // batches whose slot is free again
  bool finished_ = false;            // the batch announcing the end is made
  uint64_t inputs_ = 0;              // bytes the workers sent this shard (route_choice.h)
};

}  // namespace omnib
