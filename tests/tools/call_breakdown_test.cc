// Where one rank's time in a call went (tools/measure/call_breakdown.h), and
// how calls are charged to their slowest worker (tools/measure/profile_summary.h).
#include "tools/measure/call_breakdown.h"

#include <gtest/gtest.h>

#include "tools/measure/profile_summary.h"

namespace omnib {
namespace {

using trace::Kind;

SpanRecord span(Kind kind, int64_t begin_us, int64_t end_us, int thread = 1) {
  return {thread, "s", kind, begin_us * 1000, end_us * 1000, {}};
}

// Barrier 0-10 us, call 10-110 us.
std::vector<SpanRecord> call_of(std::vector<SpanRecord> lanes) {
  lanes.push_back(span(Kind::kBarrier, 0, 10, 0));
  lanes.push_back(span(Kind::kCall, 10, 110, 0));
  return lanes;
}

TEST(CallBreakdown, ChargesEachInstantToTheBusiestKind) {
  auto b = break_down_call(call_of({
      span(Kind::kRecv, 10, 60, 1),     // waiting 10-60, but 20-30 someone computes
      span(Kind::kCompute, 20, 30, 2),  //
      span(Kind::kSend, 25, 50, 3),     // sending 30-50 (compute wins 25-30)
      span(Kind::kWait, 70, 80, 1),     // 60-70 nothing: other
      span(Kind::kPhase, 10, 110, 4),   // phases are not counted
      span(Kind::kBackend, 80, 100, 2),
      span(Kind::kCompute, 105, 200, 3),  // clipped to the call's end
  }));
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  const CallBreakdown& c = b.value();
  EXPECT_DOUBLE_EQ(c.barrier_us, 10);
  EXPECT_DOUBLE_EQ(c.call_us, 100);
  EXPECT_DOUBLE_EQ(c.compute_us, 10 + 5);
  EXPECT_DOUBLE_EQ(c.send_us, 20);
  EXPECT_DOUBLE_EQ(c.wait_us, 10 + 10 + 10);
  EXPECT_DOUBLE_EQ(c.backend_us, 20);
  EXPECT_DOUBLE_EQ(c.other_us, 10 + 5);
  EXPECT_DOUBLE_EQ(c.compute_us + c.send_us + c.wait_us + c.backend_us + c.other_us, c.call_us);
}

TEST(CallBreakdown, NeedsExactlyOneCallSpan) {
  EXPECT_FALSE(break_down_call({span(Kind::kCompute, 0, 1)}).is_ok());
  auto two = call_of({});
  two.push_back(span(Kind::kCall, 200, 300, 0));
  EXPECT_FALSE(break_down_call(two).is_ok());
  auto empty = break_down_call(call_of({}));
  ASSERT_TRUE(empty.is_ok());
  EXPECT_DOUBLE_EQ(empty.value().other_us, 100);
}

CallBreakdown parts(double barrier, double compute, double send, double wait) {
  CallBreakdown b;
  b.barrier_us = barrier;
  b.compute_us = compute;
  b.send_us = send;
  b.wait_us = wait;
  b.call_us = compute + send + wait;
  return b;
}

TEST(ProfileSummary, ChargesEveryCallToItsSlowestWorker) {
  // Call 0: worker 1 is slower; call 1: worker 0.
  std::vector<std::vector<CallProfile>> workers = {
      {{0, parts(5, 10, 10, 10)}, {1, parts(0, 80, 0, 20)}},
      {{0, parts(10, 0, 40, 50)}, {1, parts(50, 10, 10, 10)}},
  };
  auto p = summarize_profile(workers, 3);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->calls, 2u);
  EXPECT_DOUBLE_EQ(p->call_us, 95);     // (90 + 100) / 2
  EXPECT_DOUBLE_EQ(p->barrier_us, 5);   // (10 + 0) / 2
  const double total = 10 + 90 + 0 + 100;
  EXPECT_DOUBLE_EQ(p->compute, 80 / total);
  EXPECT_DOUBLE_EQ(p->send, 40 / total);
  EXPECT_DOUBLE_EQ(p->wait, 70 / total);
  EXPECT_DOUBLE_EQ(p->barrier, 10 / total);
  EXPECT_DOUBLE_EQ(p->compute + p->send + p->wait + p->barrier + p->backend + p->other, 1.0);
  EXPECT_EQ(p->dropped_events, 3u);
}

TEST(ProfileSummary, SkipsCallsSomeWorkerDidNotTrace) {
  std::vector<std::vector<CallProfile>> workers = {{{0, parts(1, 1, 1, 1)}}, {}};
  EXPECT_FALSE(summarize_profile(workers, 0));
}

TEST(ProfileSummary, TravelsThroughTheStoreChecked) {
  std::vector<CallProfile> calls = {{3, parts(1, 2, 3, 4)}};
  auto back = call_profiles_from_json(call_profiles_to_json(calls), 4);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  ASSERT_EQ(back.value().size(), 1u);
  EXPECT_EQ(back.value()[0].iteration, 3u);
  EXPECT_DOUBLE_EQ(back.value()[0].breakdown.wait_us, 4);
  // A call outside the run, parts that do not add up, negative times.
  EXPECT_FALSE(call_profiles_from_json(call_profiles_to_json(calls), 3).is_ok());
  auto j = call_profiles_to_json(calls);
  j[0][2] = 100.0;
  EXPECT_NE(call_profiles_from_json(j, 4).status().message().find("add up"), std::string::npos);
  j = call_profiles_to_json(calls);
  j[0][4] = -1.0;
  EXPECT_FALSE(call_profiles_from_json(j, 4).is_ok());
  EXPECT_FALSE(call_profiles_from_json(nlohmann::json::object(), 4).is_ok());
}

}  // namespace
}  // namespace omnib
