// The --trace file of a run: rank 0 adds every rank's spans after each
// configuration and rewrites the file atomically (tools/report/atomic_file.h),
// so that it is always a valid trace, like the -J file; a stream (a FIFO,
// /dev/stdout) gets the trace once, from finish().
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/bootstrap/store.h"
#include "engine/status.h"
#include "tools/trace/chrome_trace.h"
#include "tools/trace/trace_collector.h"

namespace omnib {

class TraceFile {
 public:
  // `context` (command line, configuration) goes into the trace's otherData.
  TraceFile(std::string path, nlohmann::json context);

  // Adds one configuration's spans of every rank (index = rank) and rewrites
  // the file (not a stream). Blocks on disk I/O.
  Status add(std::vector<RankTrace> ranks);
  // After the last configuration: writes a stream (files are already whole).
  Status finish();

  uint64_t dropped_events() const;
  const std::string& path() const { return path_; }

 private:
  Status write();
  std::string path_;
  TraceDocument doc_;
  bool said_too_large_ = false;  // the note that trace summarize will refuse it, once
};

// After each configuration, on every rank of the job: brings the collector's
// spans to rank 0, which adds them to `file` (null on the other ranks).
Status collect_configuration_trace(Store& store, const std::string& name, int rank, int world,
                                   TraceCollector& collector, TraceFile* file);

// The largest trace file read_trace_file reads (its parsed form takes
// several times as much memory).
inline constexpr uint64_t kMaxTraceFileBytes = uint64_t{256} << 20;

// Reads a trace file this program wrote: a usage error for anything but a
// regular file of at most kMaxTraceFileBytes (never waits on a FIFO or reads
// a device without end).
Result<TraceDocument> read_trace_file(const std::string& path);

}  // namespace omnib
