#include "tools/record/span_record.h"

#include <array>

#include "tools/common/json_fields.h"

namespace omnib {

using nlohmann::json;

namespace {

constexpr std::array<const char*, trace::kKinds> kKindNames = {"compute", "send",    "recv",  "wait",
                                                               "barrier", "backend", "phase", "call"};

// A span on the store: [thread, name, kind, begin, end, peer, shard, step, bytes, blocks].
constexpr size_t kSpanFields = 10;

json span_json(const SpanRecord& s) {
  return json::array({s.thread, s.name, static_cast<int>(s.kind), s.begin_ns, s.end_ns, s.args.peer, s.args.shard,
                      s.args.step, s.args.bytes, s.args.blocks});
}

Status bad(const std::string& what) { return usage_error("trace spans: " + what); }

Result<SpanRecord> span_from_json(const json& j) {
  if (!j.is_array() || j.size() != kSpanFields) return bad("a span is not a list of " + std::to_string(kSpanFields));
  for (size_t i : {0u, 2u, 3u, 4u, 5u, 6u, 7u})
    if (!j[i].is_number_integer()) return bad("span field " + std::to_string(i) + " is not an integer");
  if (!j[1].is_string()) return bad("a span name is not a string");
  if (!j[8].is_number_unsigned() || !j[9].is_number_unsigned()) return bad("span bytes or blocks are not counts");
  SpanRecord s;
  s.thread = j[0].get<int>();
  s.name = j[1].get<std::string>();
  const int kind = j[2].get<int>();
  if (kind < 0 || kind >= trace::kKinds) return bad("span kind " + std::to_string(kind) + " is not known");
  s.kind = static_cast<trace::Kind>(kind);
  s.begin_ns = j[3].get<int64_t>();
  s.end_ns = j[4].get<int64_t>();
  if (s.end_ns < s.begin_ns) return bad("span '" + s.name + "' ends before it begins");
  s.args.peer = j[5].get<int32_t>();
  s.args.shard = j[6].get<int32_t>();
  s.args.step = j[7].get<int32_t>();
  s.args.bytes = j[8].get<uint64_t>();
  s.args.blocks = j[9].get<uint64_t>();
  return s;
}

}  // namespace

const char* kind_name(trace::Kind kind) { return kKindNames[static_cast<size_t>(kind)]; }

std::optional<trace::Kind> kind_from_name(const std::string& name) {
  for (size_t i = 0; i < kKindNames.size(); ++i)
    if (name == kKindNames[i]) return static_cast<trace::Kind>(i);
  return std::nullopt;
}

json rank_trace_to_json(const RankTrace& t) {
  json threads = json::object();
  for (const auto& [id, name] : t.thread_names) threads[std::to_string(id)] = name;
  json calls = json::array();
  for (const auto& c : t.calls) {
    json spans = json::array();
    for (const auto& s : c.spans) spans.push_back(span_json(s));
    calls.push_back({{"algo", c.algo}, {"size", c.size_bytes}, {"iter", c.iteration}, {"spans", spans}});
  }
  return {{"rank", t.rank},
          {"worker", t.worker},
          {"host", t.host},
          {"clock", {t.clock.offset_ns, t.clock.error_ns, t.clock.rounds}},
          {"threads", threads},
          {"dropped", t.dropped},
          {"calls", calls}};
}

Result<RankTrace> rank_trace_from_json(const json& j) {
  if (!j.is_object()) return bad("expected an object");
  RankTrace t;
  OMNIB_RETURN_IF_ERROR(read_field(j, "rank", t.rank));
  OMNIB_RETURN_IF_ERROR(read_field(j, "worker", t.worker));
  OMNIB_RETURN_IF_ERROR(read_field(j, "host", t.host));
  OMNIB_RETURN_IF_ERROR(read_field(j, "dropped", t.dropped));
  const json& clock = j.contains("clock") ? j["clock"] : json();
  if (!clock.is_array() || clock.size() != 3 || !clock[0].is_number_integer() || !clock[1].is_number_integer() ||
      !clock[2].is_number_integer())
    return bad("field 'clock': expected [offset_ns, error_ns, rounds]");
  t.clock = {clock[0].get<int64_t>(), clock[1].get<int64_t>(), clock[2].get<int>()};
  const json& threads = j.contains("threads") ? j["threads"] : json();
  if (!threads.is_object()) return bad("field 'threads': expected an object");
  for (const auto& [id, name] : threads.items()) {
    if (!name.is_string()) return bad("thread " + id + " has a name that is not a string");
    try {
      t.thread_names[std::stoi(id)] = name.get<std::string>();
    } catch (const std::exception&) {
      return bad("thread id '" + id + "' is not a number");
    }
  }
  const json& calls = j.contains("calls") ? j["calls"] : json();
  if (!calls.is_array()) return bad("field 'calls': expected an array");
  for (const auto& c : calls) {
    CallSpans call;
    OMNIB_RETURN_IF_ERROR(read_field(c, "algo", call.algo));
    OMNIB_RETURN_IF_ERROR(read_field(c, "size", call.size_bytes));
    OMNIB_RETURN_IF_ERROR(read_field(c, "iter", call.iteration));
    const json& spans = c.contains("spans") ? c["spans"] : json();
    if (!spans.is_array()) return bad("field 'spans': expected an array");
    for (const auto& s : spans) {
      auto span = span_from_json(s);
      if (!span.is_ok()) return span.status();
      call.spans.push_back(span.take());
    }
    t.calls.push_back(std::move(call));
  }
  return t;
}

void merge_rank_trace(RankTrace& into, RankTrace&& more) {
  for (auto& [id, name] : more.thread_names) into.thread_names[id] = std::move(name);
  into.dropped += more.dropped;
  for (auto& c : more.calls) into.calls.push_back(std::move(c));
}

}  // namespace omnib
