// The critical path of a call (tools/trace/critical_path.h) on small
// hand-made traces whose answer is known.
#include "tools/trace/critical_path.h"

#include <gtest/gtest.h>

namespace omnib {
namespace {

using trace::Kind;

SpanRecord span(int thread, const char* name, Kind kind, int64_t begin_us, int64_t end_us, trace::Args args = {}) {
  return {thread, name, kind, begin_us * 1000, end_us * 1000, args};
}

CallSpans call_on(int64_t begin_us, int64_t end_us, std::vector<SpanRecord> lanes) {
  lanes.push_back(span(0, "barrier", Kind::kBarrier, begin_us - 5, begin_us));
  lanes.push_back(span(0, "allreduce", Kind::kCall, begin_us, end_us));
  return CallSpans{"algo", 1024, 0, std::move(lanes)};
}

std::vector<std::string> names(const CriticalPath& p) {
  std::vector<std::string> out;
  for (const auto& s : p.steps) out.push_back(std::to_string(s.rank) + ":" + s.span->name);
  return out;
}

// Rank 0 computes, then sends; rank 1 has been waiting in its receive since
// the start, then reduces. The path is rank 0's work, then rank 1's tail.
TEST(CriticalPath, FollowsAReceiveToTheSendItWaitedFor) {
  CallSpans r0 = call_on(0, 60, {span(1, "scan", Kind::kCompute, 2, 30),
                                 span(1, "send frame", Kind::kSend, 30, 40, {.peer = 1, .bytes = 100})});
  CallSpans r1 = call_on(1, 100, {span(1, "recv frame", Kind::kRecv, 3, 50, {.peer = 0, .bytes = 100}),
                                  span(1, "reduce", Kind::kCompute, 50, 95)});
  TracedCall call{"algo", 1024, 0, {&r0, &r1}};
  const CriticalPath p = critical_path(call, {true, true}, 0);
  EXPECT_EQ(names(p), (std::vector<std::string>{"0:scan", "0:send frame", "1:recv frame", "1:reduce"}));
  EXPECT_EQ(p.start_rank, 0);
  EXPECT_EQ(p.end_rank, 1);
  EXPECT_DOUBLE_EQ(p.call_us(), 100);
  EXPECT_DOUBLE_EQ(p.entry_skew_us, 0);
  // Critical parts: 28 + 10 + 10 (from the send's end) + 45.
  EXPECT_DOUBLE_EQ(p.steps[2].critical_us, 10);
  EXPECT_DOUBLE_EQ(p.critical_us, 93);
  EXPECT_DOUBLE_EQ(p.coverage(), 0.93);
}

// A receive that found its frame already there did not wait for the sender:
// the path stays on its own lane.
TEST(CriticalPath, AReceiveThatDidNotWaitStaysOnItsLane) {
  CallSpans r0 = call_on(0, 20, {span(1, "send frame", Kind::kSend, 1, 5, {.peer = 1})});
  CallSpans r1 = call_on(0, 100, {span(1, "scan", Kind::kCompute, 1, 60),
                                  span(1, "recv frame", Kind::kRecv, 60, 61, {.peer = 0}),
                                  span(1, "reduce", Kind::kCompute, 61, 99)});
  TracedCall call{"algo", 1024, 0, {&r0, &r1}};
  const CriticalPath p = critical_path(call, {true, true}, 0);
  EXPECT_EQ(names(p), (std::vector<std::string>{"1:scan", "1:recv frame", "1:reduce"}));
}

// The k-th receive matches the k-th send of the same stream and shard: two
// links between the same ranks (blocks to a shard, results from another)
// are told apart.
TEST(CriticalPath, MatchesFramesPerLinkInOrder) {
  CallSpans r0 = call_on(0, 90, {
      span(1, "send batch", Kind::kSend, 1, 10, {.peer = 1, .shard = 1}),
      span(2, "send result", Kind::kSend, 5, 8, {.peer = 1, .shard = 0}),
      span(2, "send result", Kind::kSend, 70, 80, {.peer = 1, .shard = 0}),
  });
  CallSpans r1 = call_on(0, 100, {
      span(1, "recv result", Kind::kRecv, 2, 9, {.peer = 0, .shard = 0}),
      span(1, "recv result", Kind::kRecv, 10, 85, {.peer = 0, .shard = 0}),
      span(2, "recv batch", Kind::kRecv, 2, 12, {.peer = 0, .shard = 1}),
  });
  TracedCall call{"algo", 1024, 0, {&r0, &r1}};
  const CriticalPath p = critical_path(call, {true, true}, 0);
  ASSERT_GE(p.steps.size(), 2u);
  EXPECT_EQ(p.steps.back().span, &r1.spans[1]);
  EXPECT_EQ(p.steps[p.steps.size() - 2].span, &r0.spans[2]);  // the second result, not the batch
}

// A wait for another lane continues at what released it, preferring the
// span with the same peer.
TEST(CriticalPath, FollowsAWaitToTheLaneThatEndedIt) {
  CallSpans r0 = call_on(0, 100, {
      span(1, "recv batch", Kind::kRecv, 1, 40, {.peer = 1}),
      span(2, "recv batch", Kind::kRecv, 1, 45, {.peer = 2}),
      span(3, "wait block", Kind::kWait, 2, 41, {.peer = 1}),
      span(3, "reduce", Kind::kCompute, 41, 90),
  });
  CallSpans r1 = call_on(0, 50, {span(1, "send batch", Kind::kSend, 30, 39, {.peer = 0})});
  CallSpans r2 = call_on(0, 50, {span(1, "send batch", Kind::kSend, 20, 44, {.peer = 0})});
  TracedCall call{"algo", 1024, 0, {&r0, &r1, &r2}};
  const CriticalPath p = critical_path(call, {true, true, true}, 0);
  EXPECT_EQ(names(p), (std::vector<std::string>{"1:send batch", "0:recv batch", "0:wait block", "0:reduce"}));
}

// Only workers end a call; a dedicated aggregator that finishes last does not.
TEST(CriticalPath, EndsOnTheLastWorker) {
  CallSpans w = call_on(0, 50, {span(1, "reduce", Kind::kCompute, 1, 49)});
  CallSpans agg = call_on(0, 90, {span(1, "reduce", Kind::kCompute, 1, 89)});
  TracedCall call{"algo", 1024, 0, {&w, &agg}};
  const CriticalPath p = critical_path(call, {true, false}, 0);
  EXPECT_EQ(p.end_rank, 0);
  EXPECT_EQ(names(p), (std::vector<std::string>{"0:reduce"}));
}

}  // namespace
}  // namespace omnib
