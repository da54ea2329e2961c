// The critical path of one call: the chain of spans, across ranks, that
// decided when the call ended (docs/profiling.md). It is found backwards from
// the end of the call on the worker that finished last:
//   - a receive that began before its frame was sent was waiting for the
//     sender: the path continues at the matching send on the peer (frames of
//     one direction of a link arrive in the order they were sent, so the k-th
//     receive "recv X" from a peer matches the peer's k-th send "send X" to
//     this rank with the same shard: shards and X tell the links of one pair
//     of ranks apart; a rank's link to itself counts too);
//   - a wait for another lane continues at the span of this rank that ended
//     last while it waited (preferring one with the same peer): the one that
//     released it;
//   - anything else continues at the span before it on the same lane, or,
//     for a lane's first span, at the span of this rank that ended last
//     before it began (the call's own work before it starts its lanes).
// It stops where the rank has nothing earlier in the call.
#pragma once

#include <cstdint>
#include <vector>

#include "tools/trace/chrome_trace.h"

namespace omnib {

struct PathStep {
  int rank = 0;
  const SpanRecord* span = nullptr;
  // The part of the span on the path: from the end of the step before (or
  // the span's begin, if later) to the span's end. A receive that follows
  // its matching send owns the time from the send's end: the frame was in
  // flight.
  double critical_us = 0;
};

struct CriticalPath {
  std::vector<PathStep> steps;  // first to last
  int start_rank = 0;           // where the first step ran
  int end_rank = 0;             // the worker whose call ended last
  int64_t call_begin_ns = 0;    // the call's begin on start_rank
  int64_t call_end_ns = 0;      // the call's end on end_rank
  double entry_skew_us = 0;     // how much later start_rank began the call than the first rank did
  double critical_us = 0;       // the steps' critical parts, summed
  double call_us() const { return static_cast<double>(call_end_ns - call_begin_ns) / 1e3; }
  // The share of the call the path explains; the rest is time between spans
  // (code that records none, lane wake-ups).
  double coverage() const { return call_us() > 0 ? critical_us / call_us() : 0; }
};

// `worker[r]`: whether rank r is a worker (only workers end a call).
// `tolerance_ns`: how far clocks of different ranks may disagree.
CriticalPath critical_path(const TracedCall& call, const std::vector<bool>& worker, int64_t tolerance_ns);

}  // namespace omnib
