// The checks the end-to-end trace tests rely on (tests/support/trace_checks.h) pass
// a sound trace and catch each kind of broken one.
#include "tests/support/trace_checks.h"

#include <gtest/gtest.h>

namespace omnib {
namespace {

using nlohmann::json;
using trace::Kind;

SpanRecord span(int thread, const char* name, Kind kind, int64_t begin_us, int64_t end_us, trace::Args args = {}) {
  return {thread, name, kind, begin_us * 1000, end_us * 1000, args};
}

// Two workers, one call: rank 0 scans and sends 100 bytes (its call takes
// 60 us), rank 1 waits for them and reduces (100 us).
TraceDocument sound() {
  TraceDocument doc;
  for (int r = 0; r < 2; ++r) {
    RankTrace t;
    t.rank = r;
    CallSpans c{"ring", 4096, 0, {span(0, "barrier", Kind::kBarrier, 0, 10),
                                  span(0, "allreduce", Kind::kCall, 10, r == 0 ? 70 : 110)}};
    if (r == 0) {
      c.spans.push_back(span(1, "send step", Kind::kPhase, 11, 60));
      c.spans.push_back(span(1, "scan", Kind::kCompute, 12, 40));
      c.spans.push_back(span(1, "send frame", Kind::kSend, 40, 50, {.peer = 1, .bytes = 100}));
    } else {
      c.spans.push_back(span(1, "recv frame", Kind::kRecv, 11, 55, {.peer = 0, .bytes = 100}));
      c.spans.push_back(span(1, "reduce", Kind::kCompute, 55, 108));
    }
    t.calls.push_back(c);
    doc.ranks.push_back(t);
  }
  return doc;
}

json results_measuring(double us) {
  return {{"results", json::array({{{"algo", "ring"}, {"config", {{"size_bytes", 4096}}}, {"samples_us", {us}}}})}};
}

SpanRecord& named(TraceDocument& doc, int rank, const std::string& name) {
  for (auto& s : doc.ranks[static_cast<size_t>(rank)].calls[0].spans)
    if (s.name == name) return s;
  throw std::runtime_error("no span " + name);
}

TEST(TraceChecks, ASoundTracePassesThemAll) {
  const TraceDocument doc = sound();
  EXPECT_EQ(testing::check_nesting(doc), std::vector<std::string>{});
  EXPECT_EQ(testing::check_call_times(doc, results_measuring(100), 0.05), std::vector<std::string>{});
  EXPECT_EQ(testing::check_critical_paths(doc, 0.9, 0), std::vector<std::string>{});
  EXPECT_EQ(testing::check_bytes_balance(doc), std::vector<std::string>{});
}

TEST(TraceChecks, NestingCatchesOverlapsAndStrays) {
  TraceDocument doc = sound();
  named(doc, 0, "scan").end_ns = 70'000;  // past its phase's end, on the same lane
  EXPECT_EQ(testing::check_nesting(doc).size(), 1u);
  doc = sound();
  named(doc, 1, "reduce").end_ns = 120'000;  // after the call returned
  EXPECT_EQ(testing::check_nesting(doc).size(), 1u);
  doc = sound();
  named(doc, 1, "barrier").end_ns = 20'000;  // still in the barrier when the call began
  EXPECT_EQ(testing::check_nesting(doc).size(), 1u);
  doc = sound();
  doc.ranks[1].calls.push_back(doc.ranks[1].calls[0]);  // a second call on top of the first
  EXPECT_FALSE(testing::check_nesting(doc).empty());
}

TEST(TraceChecks, CallTimesMustMatchTheMeasurement) {
  const TraceDocument doc = sound();
  EXPECT_EQ(testing::check_call_times(doc, results_measuring(104), 0.05).size(), 0u);
  EXPECT_EQ(testing::check_call_times(doc, results_measuring(106), 0.05).size(), 1u);
  EXPECT_EQ(testing::check_call_times(doc, results_measuring(94), 0.05).size(), 1u);
  EXPECT_EQ(testing::check_call_times(doc, json{{"results", json::array()}}, 0.05).size(), 1u);
}

TEST(TraceChecks, CriticalPathsMustCrossRanksAndExplainTheCall) {
  TraceDocument doc = sound();
  // The receive found its frame waiting: the path never leaves rank 1.
  named(doc, 1, "recv frame").begin_ns = 52'000;
  named(doc, 1, "recv frame").end_ns = 53'000;
  auto problems = testing::check_critical_paths(doc, 0, 0);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("crosses"), std::string::npos) << problems[0];
  // Most of the call unexplained: caught, unless one call in one may stall.
  doc = sound();
  named(doc, 1, "reduce").end_ns = 70'000;
  EXPECT_EQ(testing::check_critical_paths(doc, 0.9, 0).size(), 1u);
  EXPECT_EQ(testing::check_critical_paths(doc, 0.9, 1.0).size(), 0u);
  // A run the host set the time of is not held to the coverage; another algorithm's is.
  const std::string algo = doc.ranks[0].calls[0].algo;
  EXPECT_EQ(testing::check_critical_paths(doc, 0.9, 0, {algo}).size(), 0u);
  EXPECT_EQ(testing::check_critical_paths(doc, 0.9, 0, {algo + "-other"}).size(), 1u);
}

TEST(TraceChecks, BytesMustArriveAsSent) {
  TraceDocument doc = sound();
  named(doc, 1, "recv frame").args.bytes = 99;
  EXPECT_EQ(testing::check_bytes_balance(doc).size(), 1u);
  doc = sound();
  named(doc, 1, "recv frame").args.peer = 1;  // from the wrong rank
  EXPECT_EQ(testing::check_bytes_balance(doc).size(), 2u);
}

}  // namespace
}  // namespace omnib
