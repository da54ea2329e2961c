// The "bytes in flight" counter tracks of a trace: per directed pair of
// ranks, the payload bytes one has handed to its transport and the other has
// not yet taken off it, from their send and receive spans on rank 0's clock.
// Sends and receives are paired like the critical path pairs them (the k-th
// "recv X" of a link with its k-th "send X"); a frame is in flight from the
// end of its send to the end of its receive, or to the send's end when the
// receive finished first (the sender's thread was off the CPU before its
// send returned), so a track never goes below zero and returns to zero when
// the call's frames have all arrived. Links of a rank to itself are not on
// the wire and get no track.
#pragma once

#include <cstdint>
#include <vector>

#include "tools/record/span_record.h"

namespace omnib {

struct InFlightSample {
  int from = 0;
  int to = 0;
  int64_t t_ns = 0;   // aligned
  int64_t bytes = 0;  // after this instant's change
};

// `calls[r]`: rank r's spans of one call (null when the rank has none).
// Samples in time order for each pair, pairs in (from, to) order.
std::vector<InFlightSample> bytes_in_flight(const std::vector<const CallSpans*>& calls);

}  // namespace omnib
