// What a summing rank takes off its links from the workers: each worker's
// batches in stream order, checked (frame type, call, route) and decoded
// into the shard's aggregator, at most a window ahead of the sums. The
// shard server and the direct route's aggregation both read their inputs
// this way.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/omni/omni_call.h"
#include "engine/omni/omni_peers.h"
#include "engine/omni/shard_aggregator.h"
#include "engine/transport/connection.h"

namespace omnib {

// Fails unless `f` is a frame of `type` for call `seq` (a peer that sent
// something else is named, with what it sent).
Status expect_omni_frame(const Frame& f, wire::FrameType type, uint64_t seq, int peer);

// Takes what every worker's link holds into `aggregator`, up to the call's
// window per worker. `stream` is the map's shard the batches belong to;
// input_ended[w] is set once worker w's last batch arrived; `bytes` counts
// the frames taken, headers included.
Status take_worker_batches(const OmniCall& call, const OmniPeers& peers, ShardAggregator& aggregator, int stream,
                           std::vector<char>& input_ended, uint64_t& bytes, bool& moved);

}  // namespace omnib
