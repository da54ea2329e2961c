// Where one rank's time in one call went, from its spans (docs/profiling.md).
// At every instant of the call the rank counts as computing when any of its
// lanes computes, else sending when any lane sends, else waiting when any
// lane waits for a peer's bytes or for another lane, else in a backend call
// (Gloo, NCCL); time with no span open is "other" (lane wake-ups, set-up).
// The barrier before the call is counted on its own.
#pragma once

#include <vector>

#include "engine/base/status.h"
#include "tools/record/span_record.h"

namespace omnib {

struct CallBreakdown {
  double barrier_us = 0;  // the harness's barrier before the call
  double call_us = 0;     // the call, as timed
  // The parts of call_us; they add up to it.
  double compute_us = 0;
  double send_us = 0;
  double wait_us = 0;
  double backend_us = 0;
  double other_us = 0;
  double total_us() const { return barrier_us + call_us; }
};

// From one rank's spans of one call. Usage error when the spans hold no
// call span, or more than one call or barrier span.
Result<CallBreakdown> break_down_call(const std::vector<SpanRecord>& spans);

}  // namespace omnib
