// What one rank's runner does for --trace and --profile (docs/profiling.md):
// switches the recorder (engine/trace/trace_recorder.h) on for the calls to
// trace, drains it after each call, adds the harness's own barrier and call
// spans, puts the times on rank 0's clock, keeps the spans for the trace file
// and hands each call's breakdown to the rank's samples.
//
// Warm-up calls record too, so that every lane has its buffer before the
// first timed call; their events are dropped at the end of the call.
// Threads: the runner's thread only, between collective calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/base/status.h"
#include "engine/trace/trace_recorder.h"
#include "engine/links/link_factory.h"
#include "tools/measure/rank_samples.h"
#include "tools/record/span_record.h"
#include "tools/trace/trace_options.h"

namespace omnib {

// One call as the runner saw it.
struct CallTiming {
  using Clock = std::chrono::steady_clock;
  std::string algo;
  uint64_t size_bytes = 0;
  bool timed = false;
  uint64_t iteration = 0;  // timed calls only: run * iters + i
  Clock::time_point barrier_begin, barrier_end, call_begin, call_end;
};

class TraceCollector {
 public:
  explicit TraceCollector(TraceOptions options) : options_(std::move(options)) {}

  bool active() const { return options_.active(); }

  // Once, at the same point on every rank, after the links are up: sizes the
  // buffers and, for a trace file, measures this rank's clock against rank 0's.
  Status start(LinkFactory& links, int rank, int world, bool worker, const std::string& host);

  // Before a call's barrier: switches recording on when the call is to be
  // traced (or is a warm-up). Returns the time the barrier begins.
  CallTiming::Clock::time_point before_call(bool timed, uint64_t iteration) const;

  // After the call, outside the timed region: drains the recorder; for a
  // traced timed call adds its breakdown (--profile) and the count of
  // dropped events to `samples`, and keeps its spans (--trace).
  Status after_call(const CallTiming& call, RankSamples& samples);

  // This rank's spans since the last take (thread names and clock included).
  RankTrace take_spans();

 private:
  bool traced(bool timed, uint64_t iteration) const;
  int64_t aligned(CallTiming::Clock::time_point t) const;

  TraceOptions options_;
  RankTrace spans_;
  int harness_thread_ = 0;
};

}  // namespace omnib
