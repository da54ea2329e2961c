// How big the omni engine's batches are and how many of them may be in
// flight, chosen from the link and the job rather than fixed: a receiver
// fed by many senders keeps at most a few milliseconds of its link in flight
// in all (so that incast cannot overflow the queue in front of it), and a
// link's stream is cut into several batches (so the pipeline fills at once
// and drains late). docs/algorithms.md states the rules and the bound.
#pragma once

#include <cstddef>
#include <cstdint>

namespace omnib {

struct StreamTuning {
  size_t frame_bytes = 0;     // target bytes of block values per batch
  size_t recv_frames = 0;     // frames a receiving end holds before it stops reading
  size_t send_frames = 0;     // posted frames a sending end keeps unfinished
  size_t inflight_bytes = 0;  // bytes a link may have in flight to its receiver; 0: the transport's default
};

// Bytes a receiver keeps in flight over all its links: 4 ms at its link rate,
// or, when the rate is unknown (loopback, a real cluster), 8 MiB.
uint64_t receive_budget_bytes(uint64_t link_rate_bps);

// `senders`: links that feed one receiver; `bytes_per_link`: the most one
// link carries in a call (a dense stream); `link_rate_bps`: 0 when unknown.
StreamTuning tune_streams(uint64_t link_rate_bps, int senders, uint64_t bytes_per_link);

}  // namespace omnib
