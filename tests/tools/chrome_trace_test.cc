// The trace file (tools/trace/chrome_trace.h): what Perfetto needs is there,
// the program reads back what it wrote, refuses what it did not, and the
// bytes-in-flight counters follow the sends and receives.
#include "tools/trace/chrome_trace.h"

#include <gtest/gtest.h>

#include "tools/trace/link_counters.h"

namespace omnib {
namespace {

using nlohmann::json;
using trace::Kind;

SpanRecord span(int thread, const char* name, Kind kind, int64_t begin_ns, int64_t end_ns, trace::Args args = {}) {
  return {thread, name, kind, begin_ns, end_ns, args};
}

TraceDocument two_ranks() {
  TraceDocument doc;
  doc.context = {{"command_line", "omni-bench allreduce --trace t.json"}};
  for (int r = 0; r < 2; ++r) {
    RankTrace t;
    t.rank = r;
    t.worker = r == 0;
    t.host = "host-" + std::to_string(r);
    t.clock = {r * 120, r * 40, 16};
    t.dropped = static_cast<uint64_t>(r);
    t.thread_names = {{0, "harness"}, {3, "omni: send to shard 1"}};
    CallSpans c{"omni", 4096, 2, {}};
    c.spans.push_back(span(0, "barrier", Kind::kBarrier, 1'000'000, 1'000'500));
    c.spans.push_back(span(0, "allreduce", Kind::kCall, 1'000'500, 1'009'123));
    c.spans.push_back(span(3, r == 0 ? "send batch" : "recv batch", r == 0 ? Kind::kSend : Kind::kRecv,
                           1'001'001 + r * 10, 1'002'002 + r * 1000,
                           {.peer = 1 - r, .shard = 1, .bytes = 700, .blocks = r == 0 ? 3u : 0u}));
    t.calls.push_back(c);
    doc.ranks.push_back(t);
  }
  return doc;
}

TEST(ChromeTrace, HoldsWhatPerfettoShows) {
  const json j = to_chrome_trace(two_ranks());
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::set<std::string> processes, threads;
  int spans = 0, counters = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "C") ++counters;
    if (e["ph"] != "X") continue;
    ++spans;
    for (const char* k : {"iter", "algo", "size"}) EXPECT_TRUE(e["args"].contains(k)) << e.dump();
  }
  EXPECT_EQ(processes, (std::set<std::string>{"rank 0 (worker) host-0", "rank 1 (aggregator) host-1"}));
  EXPECT_EQ(threads, (std::set<std::string>{"harness", "omni: send to shard 1"}));
  EXPECT_EQ(spans, 6);
  EXPECT_EQ(counters, 2);  // up when sent, down when received
  EXPECT_EQ(j["otherData"]["dropped_events"], 1);
  EXPECT_EQ(j["otherData"]["max_clock_error_ns"], 40);
  EXPECT_EQ(j["otherData"]["command_line"], "omni-bench allreduce --trace t.json");
}

TEST(ChromeTrace, ReadsBackWhatItWrote) {
  const TraceDocument doc = two_ranks();
  auto back = from_chrome_trace(json::parse(to_chrome_trace(doc).dump()));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  ASSERT_EQ(back.value().ranks.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const RankTrace& a = doc.ranks[r];
    const RankTrace& b = back.value().ranks[r];
    EXPECT_EQ(b.worker, a.worker);
    EXPECT_EQ(b.host, a.host);
    EXPECT_EQ(b.clock.offset_ns, a.clock.offset_ns);
    EXPECT_EQ(b.clock.error_ns, a.clock.error_ns);
    EXPECT_EQ(b.dropped, a.dropped);
    EXPECT_EQ(b.thread_names, a.thread_names);
    ASSERT_EQ(b.calls.size(), 1u);
    EXPECT_EQ(b.calls[0].iteration, 2u);
    ASSERT_EQ(b.calls[0].spans.size(), a.calls[0].spans.size());
    for (size_t i = 0; i < a.calls[0].spans.size(); ++i) {
      const SpanRecord& x = a.calls[0].spans[i];
      const SpanRecord& y = b.calls[0].spans[i];
      EXPECT_EQ(y.name, x.name);
      EXPECT_EQ(y.kind, x.kind);
      EXPECT_EQ(y.begin_ns, x.begin_ns);  // nanoseconds survive microsecond timestamps
      EXPECT_EQ(y.end_ns, x.end_ns);
      EXPECT_EQ(y.args.peer, x.args.peer);
      EXPECT_EQ(y.args.shard, x.args.shard);
      EXPECT_EQ(y.args.bytes, x.args.bytes);
      EXPECT_EQ(y.args.blocks, x.args.blocks);
    }
  }
}

TEST(ChromeTrace, RefusesWhatItDidNotWrite) {
  const json good = to_chrome_trace(two_ranks());
  json j = good;
  j["otherData"]["tool"] = "someone else";
  EXPECT_NE(from_chrome_trace(j).status().message().find("not an omni-bench trace"), std::string::npos);
  j = good;
  j["otherData"]["trace_format"] = kTraceFormatVersion + 1;
  EXPECT_NE(from_chrome_trace(j).status().message().find("newer omni-bench"), std::string::npos);
  j = good;
  for (auto& e : j["traceEvents"])
    if (e["ph"] == "X") {
      e["cat"] = "sleeping";
      break;
    }
  EXPECT_NE(from_chrome_trace(j).status().message().find("unknown category"), std::string::npos);
  j = good;
  for (auto& e : j["traceEvents"])
    if (e["ph"] == "X") {
      e["args"].erase("iter");
      break;
    }
  EXPECT_NE(from_chrome_trace(j).status().message().find("'iter'"), std::string::npos);
  j = good;
  for (auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") e["args"]["name"] = "a process";
  EXPECT_FALSE(from_chrome_trace(j).is_ok());
  EXPECT_FALSE(from_chrome_trace(json::array()).is_ok());
}

// Found by fuzzing the reader: times of 1e300 us (nanoseconds past int64:
// undefined behaviour) are refused, and a host name of a million characters
// loads (std::regex, which read process names, overflowed the stack).
TEST(ChromeTrace, RefusesTimesPastAnyClockAndReadsLongHostNames) {
  const json good = to_chrome_trace(two_ranks());
  json j = good;
  for (auto& e : j["traceEvents"])
    if (e["ph"] == "X") e["ts"] = 1e300;
  EXPECT_NE(from_chrome_trace(j).status().message().find("ts is out of range"), std::string::npos);
  j = good;
  j["otherData"]["clock"][1]["offset_ns"] = -1e300;
  EXPECT_NE(from_chrome_trace(j).status().message().find("offset_ns is out of range"), std::string::npos);
  j = good;
  const std::string host(1000000, 'h');
  auto is_rank1_name = [](const json& e) { return e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 1; };
  for (auto& e : j["traceEvents"])
    if (is_rank1_name(e)) e["args"]["name"] = "rank 1 (aggregator) " + host;
  auto doc = from_chrome_trace(j);
  ASSERT_TRUE(doc.is_ok()) << doc.status().message();
  EXPECT_EQ(doc.value().ranks[1].host, host);
  EXPECT_FALSE(doc.value().ranks[1].worker);
  for (auto& e : j["traceEvents"])
    if (is_rank1_name(e)) e["args"]["name"] = "rank 1 (observer) h";
  EXPECT_FALSE(from_chrome_trace(j).is_ok());
  // A peer that is no rank of the trace: the counters written for it would
  // name a rank without a process, and the trace would not read back.
  j = good;
  for (auto& e : j["traceEvents"])
    if (e["ph"] == "X" && e["args"].contains("peer")) e["args"]["peer"] = 5;
  EXPECT_NE(from_chrome_trace(j).status().message().find("names peer 5, which is not a rank"), std::string::npos);
}

TEST(LinkCounters, BytesInFlightRiseOnSendAndFallOnReceive) {
  CallSpans r0{"ring", 1, 0, {span(1, "send frame", Kind::kSend, 0, 10, {.peer = 1, .bytes = 100}),
                              span(1, "send frame", Kind::kSend, 10, 20, {.peer = 1, .bytes = 50}),
                              span(2, "send frame", Kind::kSend, 0, 5, {.peer = 0, .bytes = 9})}};  // to itself
  CallSpans r1{"ring", 1, 0, {span(1, "recv frame", Kind::kRecv, 0, 15, {.peer = 0, .bytes = 100}),
                              span(1, "recv frame", Kind::kRecv, 15, 30, {.peer = 0, .bytes = 50})}};
  const auto samples = bytes_in_flight({&r0, &r1});
  std::vector<std::pair<int64_t, int64_t>> seen;
  for (const auto& s : samples) {
    EXPECT_EQ(s.from, 0);
    EXPECT_EQ(s.to, 1);
    seen.push_back({s.t_ns, s.bytes});
  }
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, int64_t>>{{10, 100}, {15, 0}, {20, 50}, {30, 0}}));
}

// A receive can end before its send returns (the sender's thread was off the
// CPU): the frame leaves the count when the send ends, never below zero.
TEST(LinkCounters, NeverGoBelowZero) {
  CallSpans r0{"ring", 1, 0, {span(1, "send frame", Kind::kSend, 0, 40, {.peer = 1, .bytes = 100})}};
  CallSpans r1{"ring", 1, 0, {span(1, "recv frame", Kind::kRecv, 0, 15, {.peer = 0, .bytes = 100})}};
  const auto samples = bytes_in_flight({&r0, &r1});
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].t_ns, 40);
  EXPECT_EQ(samples[0].bytes, 0);
}

}  // namespace
}  // namespace omnib
