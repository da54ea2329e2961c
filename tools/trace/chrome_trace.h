// The trace file: Chrome's trace-event JSON (opens in Perfetto and
// chrome://tracing), and reading it back for `trace summarize` and the tests.
// Layout (docs/profiling.md): one process per rank, named "rank N (worker)
// host"; one thread per lane; complete ("X") events with the kind as "cat"
// and iteration, algorithm and size in every span's args; "bytes in flight"
// counters per directed pair of ranks; clock offsets, their error and
// dropped events in "otherData".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/status.h"
#include "tools/trace/span_record.h"

namespace omnib {

inline constexpr int kTraceFormatVersion = 1;

struct TraceDocument {
  nlohmann::json context = nlohmann::json::object();  // command line, configuration
  std::vector<RankTrace> ranks;                        // index = rank
};

nlohmann::json to_chrome_trace(const TraceDocument& doc);

// Reads a trace this program wrote (checked: a usage error names what is
// wrong); spans of one (algo, size, iteration) and rank form one CallSpans.
Result<TraceDocument> from_chrome_trace(const nlohmann::json& j);

// The same from the text of a trace file (`path` names it in messages): a
// usage error for text that is not JSON or nests deeper than any trace
// (tools/config/json_fields.h, kMaxJsonDepth). The fuzz target of the reader.
Result<TraceDocument> parse_trace_document(const std::string& text, const std::string& path);

// The spans of one call on every rank (null where a rank has none), calls in
// the order the trace holds them.
struct TracedCall {
  std::string algo;
  uint64_t size_bytes = 0;
  uint64_t iteration = 0;
  std::vector<const CallSpans*> ranks;
};
std::vector<TracedCall> calls_of(const TraceDocument& doc);

}  // namespace omnib
