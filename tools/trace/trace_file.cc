#include "tools/trace/trace_file.h"

#include <cstdio>

#include "tools/config/regular_file.h"
#include "tools/report/atomic_file.h"
#include "tools/trace/trace_gather.h"

namespace omnib {

TraceFile::TraceFile(std::string path, nlohmann::json context) : path_(std::move(path)) {
  doc_.context = std::move(context);
}

Status TraceFile::add(std::vector<RankTrace> ranks) {
  if (doc_.ranks.empty()) {
    doc_.ranks = std::move(ranks);
  } else {
    if (ranks.size() != doc_.ranks.size())
      return internal_error("a configuration's trace has " + std::to_string(ranks.size()) + " ranks, the run " +
                            std::to_string(doc_.ranks.size()));
    for (size_t r = 0; r < ranks.size(); ++r) merge_rank_trace(doc_.ranks[r], std::move(ranks[r]));
  }
  auto kind = output_kind(path_);
  if (!kind.is_ok()) return kind.status();
  return kind.value() == OutputKind::kStream ? Status::ok() : write();
}

Status TraceFile::finish() {
  auto kind = output_kind(path_);
  if (!kind.is_ok()) return kind.status();
  return kind.value() == OutputKind::kStream ? write() : Status::ok();
}

Status TraceFile::write() {
  const std::string text = to_chrome_trace(doc_).dump() + "\n";
  // Written all the same (Perfetto opens it), but said once: trace summarize
  // will refuse it.
  if (text.size() > kMaxTraceFileBytes && !said_too_large_) {
    said_too_large_ = true;
    std::fprintf(stderr,
                 "omni-bench: %s has grown past %llu MiB, more than trace summarize reads: lower --trace-iters or "
                 "--trace-buffer to summarize it (Perfetto still opens it)\n",
                 path_.c_str(), static_cast<unsigned long long>(kMaxTraceFileBytes >> 20));
  }
  return write_file_atomically(path_, text);
}

uint64_t TraceFile::dropped_events() const {
  uint64_t n = 0;
  for (const auto& r : doc_.ranks) n += r.dropped;
  return n;
}

Status collect_configuration_trace(Store& store, const std::string& name, int rank, int world,
                                   TraceCollector& collector, TraceFile* file) {
  auto all = gather_rank_traces(store, name, rank, world, collector.take_spans());
  if (!all.is_ok()) return all.status();
  return file ? file->add(all.take()) : Status::ok();
}

Result<TraceDocument> read_trace_file(const std::string& path) {
  auto text = read_regular_file(path, kMaxTraceFileBytes, "trace file",
                                "give a file written by omni-bench allreduce --trace");
  if (!text.is_ok()) return text.status();
  return parse_trace_document(text.value(), path);
}

}  // namespace omnib
