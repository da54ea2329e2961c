// What `omni-bench trace summarize` computes from a trace file: the --profile
// breakdown of every algorithm and size (the same code as a run's --profile,
// on the spans the file holds) and the critical path of one call of each.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

#include "engine/base/status.h"
#include "tools/report/profile_block.h"
#include "tools/trace/chrome_trace.h"
#include "tools/trace/critical_path.h"

namespace omnib {

struct CallPathReport {
  std::string algo;
  uint64_t size_bytes = 0;
  uint64_t iteration = 0;
  CriticalPath path;
};

struct TraceSummary {
  std::vector<ProfileRow> rows;          // one per algorithm and size, in trace order
  std::vector<CallPathReport> paths;     // the same order
  uint64_t dropped_events = 0;
  int64_t max_clock_error_ns = 0;
};

// `iteration`: the call whose critical path is shown; nullopt picks, for each
// algorithm and size, the call of median time. Usage error when the trace
// holds a call without its call span, or no call at all.
Result<TraceSummary> summarize_trace(const TraceDocument& doc, std::optional<uint64_t> iteration);

void print_trace_summary(std::FILE* out, const TraceSummary& summary, const TraceDocument& doc);

}  // namespace omnib
