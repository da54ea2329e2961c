// What a run records for the profiler (docs/profiling.md): --profile,
// --trace, --trace-iters and --trace-buffer, as the run plan holds them.
#pragma once

#include <cstddef>
#include <string>

#include "engine/trace/trace_recorder.h"

namespace omnib {

struct TraceOptions {
  bool profile = false;    // --profile: a breakdown per algorithm under the table and in the JSON
  std::string trace_path;  // --trace: a Chrome trace-event file; empty: none
  int trace_iters = 0;     // --trace-iters: timed calls traced per algorithm and size; 0: all
  size_t events_per_thread = trace::Recorder::kDefaultEventsPerThread;  // --trace-buffer
  bool active() const { return profile || !trace_path.empty(); }
};

}  // namespace omnib
