// The harness's view of recorded spans (docs/profiling.md): what one rank
// keeps of its traced calls, with times on rank 0's clock, and how the spans
// travel to rank 0 through the rendezvous store (compact JSON, checked on
// arrival like every other input from outside the process). The Chrome
// trace writer and reader and `trace summarize` all work on these types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/status.h"
#include "engine/trace/trace.h"

namespace omnib {

struct SpanRecord {
  int thread = 0;  // the recorder's thread number (trace::Recorder)
  std::string name;
  trace::Kind kind = trace::Kind::kCompute;
  int64_t begin_ns = 0;  // aligned: rank 0's steady clock
  int64_t end_ns = 0;
  trace::Args args;
  double duration_us() const { return static_cast<double>(end_ns - begin_ns) / 1e3; }
};

// One timed call of one algorithm on one rank, as traced.
struct CallSpans {
  std::string algo;
  uint64_t size_bytes = 0;
  uint64_t iteration = 0;  // timed call index: run * iters + i (what samples_us counts)
  std::vector<SpanRecord> spans;  // the harness's barrier and call spans included
};

// How a rank's clock relates to rank 0's (tools/trace/clock_sync.h).
struct ClockOffset {
  int64_t offset_ns = 0;  // this rank's clock minus rank 0's
  int64_t error_ns = 0;   // bound on the estimate: half the best round trip
  int rounds = 0;
};

struct RankTrace {
  int rank = 0;
  bool worker = true;
  std::string host;
  ClockOffset clock;
  std::map<int, std::string> thread_names;
  uint64_t dropped = 0;  // events lost to full buffers in traced calls
  std::vector<CallSpans> calls;
};

// "compute", "send", ...: the kind's name in traces (their "cat").
const char* kind_name(trace::Kind kind);
std::optional<trace::Kind> kind_from_name(const std::string& name);

// Compact JSON for the store, and its checked reading.
nlohmann::json rank_trace_to_json(const RankTrace& t);
Result<RankTrace> rank_trace_from_json(const nlohmann::json& j);

// Appends `more`'s calls, thread names and drops to `into` (same rank).
void merge_rank_trace(RankTrace& into, RankTrace&& more);

}  // namespace omnib
