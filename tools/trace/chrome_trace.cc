#include "tools/trace/chrome_trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "tools/config/json_fields.h"
#include "tools/trace/link_counters.h"

namespace omnib {

using nlohmann::json;

namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }
int64_t ns_of(double us) { return std::llround(us * 1e3); }

// Times in a trace are microseconds of a steady clock: at most 1e15 (31
// years) either way, so that nanoseconds, and their sums, fit int64.
constexpr double kMaxTraceUs = 1e15;

// Usage error unless `v` is a finite number of at most `max` either way.
Status check_range(double v, double max, const std::string& what) {
  if (std::isfinite(v) && std::fabs(v) <= max) return Status::ok();
  return usage_error(what + " is out of range (at most " + std::to_string(static_cast<int64_t>(max)) + " either way)");
}

std::string process_name(const RankTrace& r) {
  return "rank " + std::to_string(r.rank) + " (" + (r.worker ? "worker" : "aggregator") + ") " + r.host;
}

json span_event(const RankTrace& rank, const CallSpans& call, const SpanRecord& s) {
  json args = {{"iter", call.iteration}, {"algo", call.algo}, {"size", call.size_bytes}};
  if (s.args.peer >= 0) args["peer"] = s.args.peer;
  if (s.args.shard >= 0) args["shard"] = s.args.shard;
  if (s.args.step >= 0) args["step"] = s.args.step;
  if (s.args.bytes > 0) args["bytes"] = s.args.bytes;
  if (s.args.blocks > 0) args["blocks"] = s.args.blocks;
  return {{"ph", "X"},        {"name", s.name},        {"cat", kind_name(s.kind)},
          {"pid", rank.rank}, {"tid", s.thread},       {"ts", us(s.begin_ns)},
          {"dur", us(s.end_ns - s.begin_ns)},          {"args", args}};
}

json metadata(const std::string& what, int pid, int tid, json args) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

// The optional integer args[name], into `out` (unchanged when absent).
template <typename T>
Status read_arg(const json& args, const char* name, T& out) {
  if (!args.contains(name)) return Status::ok();
  if (!args[name].is_number_integer()) return usage_error(std::string("span arg '") + name + "' is not an integer");
  out = args[name].get<T>();
  return Status::ok();
}

Status read_span(const json& e, RankTrace& rank, std::map<std::tuple<std::string, uint64_t, uint64_t>, size_t>& index) {
  SpanRecord s;
  std::string cat;
  double ts = 0, dur = 0;
  OMNIB_RETURN_IF_ERROR(read_field(e, "name", s.name));
  OMNIB_RETURN_IF_ERROR(read_field(e, "cat", cat));
  OMNIB_RETURN_IF_ERROR(read_field(e, "tid", s.thread));
  OMNIB_RETURN_IF_ERROR(read_field(e, "ts", ts));
  OMNIB_RETURN_IF_ERROR(read_field(e, "dur", dur));
  auto kind = kind_from_name(cat);
  if (!kind) return usage_error("span '" + s.name + "' has the unknown category '" + cat + "'");
  if (dur < 0) return usage_error("span '" + s.name + "' has a negative duration");
  OMNIB_RETURN_IF_ERROR(check_range(ts, kMaxTraceUs, "span '" + s.name + "': ts"));
  OMNIB_RETURN_IF_ERROR(check_range(dur, kMaxTraceUs, "span '" + s.name + "': dur"));
  s.kind = *kind;
  s.begin_ns = ns_of(ts);
  s.end_ns = ns_of(ts + dur);
  auto args = object_field(e, "args");
  if (!args.is_ok()) return args.status().with_context("span '" + s.name + "': ");
  const json& a = *args.value();
  std::string algo;
  uint64_t size = 0, iteration = 0;
  OMNIB_RETURN_IF_ERROR(read_field(a, "algo", algo).with_context("span '" + s.name + "': "));
  OMNIB_RETURN_IF_ERROR(read_field(a, "size", size).with_context("span '" + s.name + "': "));
  OMNIB_RETURN_IF_ERROR(read_field(a, "iter", iteration).with_context("span '" + s.name + "': "));
  OMNIB_RETURN_IF_ERROR(read_arg(a, "peer", s.args.peer));
  OMNIB_RETURN_IF_ERROR(read_arg(a, "shard", s.args.shard));
  OMNIB_RETURN_IF_ERROR(read_arg(a, "step", s.args.step));
  OMNIB_RETURN_IF_ERROR(read_arg(a, "bytes", s.args.bytes));
  OMNIB_RETURN_IF_ERROR(read_arg(a, "blocks", s.args.blocks));
  auto key = std::make_tuple(algo, size, iteration);
  auto it = index.find(key);
  if (it == index.end()) {
    it = index.emplace(key, rank.calls.size()).first;
    rank.calls.push_back(CallSpans{algo, size, iteration, {}});
  }
  rank.calls[it->second].spans.push_back(std::move(s));
  return Status::ok();
}

// "rank PID (worker) HOST" or "rank PID (aggregator) HOST" into `rank`;
// false for anything else. Read by hand: std::regex matches recursively, a
// character at a time, and a long label overflowed the stack.
bool read_process_label(const std::string& label, int pid, RankTrace& rank) {
  const std::string head = "rank " + std::to_string(pid) + " (";
  if (label.compare(0, head.size(), head) != 0) return false;
  for (const bool worker : {true, false}) {
    const std::string role = worker ? "worker) " : "aggregator) ";
    if (label.compare(head.size(), role.size(), role) != 0) continue;
    rank.worker = worker;
    rank.host = label.substr(head.size() + role.size());
    return true;
  }
  return false;
}

// Every span's peer is a rank of the trace (or none): the bytes-in-flight
// counters are drawn per pair of ranks, and a trace written from spans with
// other peers would not read back.
Status check_peers(const std::vector<RankTrace>& ranks) {
  for (const RankTrace& r : ranks)
    for (const CallSpans& c : r.calls)
      for (const SpanRecord& s : c.spans)
        if (s.args.peer < -1 || s.args.peer >= static_cast<int>(ranks.size()))
          return usage_error("rank " + std::to_string(r.rank) + ": span '" + s.name + "' names peer " +
                             std::to_string(s.args.peer) + ", which is not a rank of the trace");
  return Status::ok();
}

Status read_other_data(const json& other, std::vector<RankTrace>& ranks) {
  const json& clocks = other.contains("clock") ? other["clock"] : json();
  if (!clocks.is_array()) return usage_error("otherData: field 'clock' is missing or not an array");
  for (const auto& c : clocks) {
    int rank = 0;
    OMNIB_RETURN_IF_ERROR(read_field(c, "rank", rank).with_context("otherData: clock: "));
    if (rank < 0 || static_cast<size_t>(rank) >= ranks.size())
      return usage_error("otherData: clock of rank " + std::to_string(rank) + ", which has no process");
    ClockOffset& o = ranks[static_cast<size_t>(rank)].clock;
    OMNIB_RETURN_IF_ERROR(read_field(c, "rounds", o.rounds).with_context("otherData: clock: "));
    double offset = 0, error = 0;
    OMNIB_RETURN_IF_ERROR(read_field(c, "offset_ns", offset).with_context("otherData: clock: "));
    OMNIB_RETURN_IF_ERROR(read_field(c, "error_ns", error).with_context("otherData: clock: "));
    OMNIB_RETURN_IF_ERROR(check_range(offset, kMaxTraceUs * 1e3, "otherData: clock: offset_ns"));
    OMNIB_RETURN_IF_ERROR(check_range(error, kMaxTraceUs * 1e3, "otherData: clock: error_ns"));
    o.offset_ns = static_cast<int64_t>(offset);
    o.error_ns = static_cast<int64_t>(error);
    OMNIB_RETURN_IF_ERROR(
        read_field(c, "dropped_events", ranks[static_cast<size_t>(rank)].dropped).with_context("otherData: clock: "));
  }
  return Status::ok();
}

}  // namespace

json to_chrome_trace(const TraceDocument& doc) {
  json events = json::array();
  json clocks = json::array();
  uint64_t dropped = 0;
  int64_t worst_error = 0;
  for (const RankTrace& r : doc.ranks) {
    events.push_back(metadata("process_name", r.rank, 0, {{"name", process_name(r)}}));
    events.push_back(metadata("process_sort_index", r.rank, 0, {{"sort_index", r.rank}}));
    // Tracks sorted by name, so that each algorithm's lanes sit together.
    std::vector<std::pair<std::string, int>> by_name;
    for (const auto& [tid, name] : r.thread_names) by_name.push_back({name, tid});
    std::sort(by_name.begin(), by_name.end());
    for (size_t i = 0; i < by_name.size(); ++i) {
      const auto& [name, tid] = by_name[i];
      events.push_back(metadata("thread_name", r.rank, tid, {{"name", name}}));
      events.push_back(metadata("thread_sort_index", r.rank, tid, {{"sort_index", name == "harness" ? -1 : int(i)}}));
    }
    for (const CallSpans& call : r.calls)
      for (const SpanRecord& s : call.spans) events.push_back(span_event(r, call, s));
    clocks.push_back({{"rank", r.rank},
                      {"offset_ns", r.clock.offset_ns},
                      {"error_ns", r.clock.error_ns},
                      {"rounds", r.clock.rounds},
                      {"dropped_events", r.dropped}});
    dropped += r.dropped;
    worst_error = std::max(worst_error, r.clock.error_ns);
  }
  for (const TracedCall& call : calls_of(doc))
    for (const InFlightSample& s : bytes_in_flight(call.ranks))
      events.push_back({{"ph", "C"},
                        {"name", "bytes in flight to rank " + std::to_string(s.to)},
                        {"pid", s.from},
                        {"ts", us(s.t_ns)},
                        {"args", {{"bytes", s.bytes}}}});
  json other = doc.context;
  other["tool"] = "omni-bench";
  other["trace_format"] = kTraceFormatVersion;
  other["clock_reference"] = "steady clock (CLOCK_MONOTONIC) of rank 0, microseconds";
  other["clock"] = clocks;
  other["max_clock_error_ns"] = worst_error;
  other["dropped_events"] = dropped;
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

Result<TraceDocument> from_chrome_trace(const json& j) {
  auto other = object_field(j, "otherData");
  if (!other.is_ok()) return usage_error("not an omni-bench trace: no 'otherData' object");
  std::string tool;
  int format = 0;
  if (!read_field(*other.value(), "tool", tool).is_ok() || tool != "omni-bench")
    return usage_error("not an omni-bench trace: otherData.tool is not \"omni-bench\"");
  OMNIB_RETURN_IF_ERROR(read_field(*other.value(), "trace_format", format).with_context("otherData: "));
  if (format < 1 || format > kTraceFormatVersion)
    return usage_error("trace_format " + std::to_string(format) + " is not one this build reads (1 to " +
                       std::to_string(kTraceFormatVersion) + "): use a newer omni-bench");
  const json& events = j.contains("traceEvents") ? j["traceEvents"] : json();
  if (!events.is_array()) return usage_error("field 'traceEvents' is missing or not an array");

  TraceDocument doc;
  doc.context = *other.value();
  std::map<int, RankTrace> ranks;
  std::map<int, std::map<std::tuple<std::string, uint64_t, uint64_t>, size_t>> index;
  for (const auto& e : events) {
    std::string ph, name;
    int pid = 0;
    OMNIB_RETURN_IF_ERROR(read_field(e, "ph", ph).with_context("traceEvents: "));
    OMNIB_RETURN_IF_ERROR(read_field(e, "pid", pid).with_context("traceEvents: "));
    if (pid < 0) return usage_error("traceEvents: negative pid");
    RankTrace& rank = ranks[pid];
    rank.rank = pid;
    if (ph == "X") {
      OMNIB_RETURN_IF_ERROR(read_span(e, rank, index[pid]).with_context("rank " + std::to_string(pid) + ": "));
    } else if (ph == "M") {
      OMNIB_RETURN_IF_ERROR(read_field(e, "name", name).with_context("traceEvents: "));
      std::string label;
      if (name != "process_name" && name != "thread_name") continue;
      auto args = object_field(e, "args");
      if (!args.is_ok() || !read_field(*args.value(), "name", label).is_ok())
        return usage_error("traceEvents: a " + name + " event without a name");
      if (name == "thread_name") {
        int tid = 0;
        OMNIB_RETURN_IF_ERROR(read_field(e, "tid", tid).with_context("traceEvents: "));
        rank.thread_names[tid] = label;
      } else if (read_process_label(label, pid, rank)) {
      } else {
        return usage_error("traceEvents: process " + std::to_string(pid) + " is named '" + label +
                           "', not 'rank " + std::to_string(pid) + " (worker|aggregator) HOST'");
      }
    }
  }
  for (auto& [pid, rank] : ranks) {
    if (pid != static_cast<int>(doc.ranks.size()))
      return usage_error("the trace has no process for rank " + std::to_string(doc.ranks.size()));
    doc.ranks.push_back(std::move(rank));
  }
  OMNIB_RETURN_IF_ERROR(check_peers(doc.ranks));
  OMNIB_RETURN_IF_ERROR(read_other_data(*other.value(), doc.ranks));
  return doc;
}

std::vector<TracedCall> calls_of(const TraceDocument& doc) {
  std::vector<TracedCall> out;
  std::map<std::tuple<std::string, uint64_t, uint64_t>, size_t> index;
  for (size_t r = 0; r < doc.ranks.size(); ++r)
    for (const CallSpans& c : doc.ranks[r].calls) {
      auto key = std::make_tuple(c.algo, c.size_bytes, c.iteration);
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, out.size()).first;
        out.push_back({c.algo, c.size_bytes, c.iteration, std::vector<const CallSpans*>(doc.ranks.size(), nullptr)});
      }
      out[it->second].ranks[r] = &c;
    }
  return out;
}

Result<TraceDocument> parse_trace_document(const std::string& text, const std::string& path) {
  OMNIB_RETURN_IF_ERROR(check_json_depth(text).with_context("'" + path + "' "));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return usage_error("'" + path + "' is not JSON (a trace written part way?)");
  auto doc = from_chrome_trace(j);
  if (!doc.is_ok()) return doc.status().with_context("'" + path + "': ");
  return doc;
}

}  // namespace omnib
