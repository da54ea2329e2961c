// The span recorder (engine/trace): what is recorded while on and off, per
// thread, and what a full buffer drops and counts.
#include "engine/trace/trace_recorder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

namespace omnib::trace {
namespace {

// Every test starts and ends with the recorder off and empty.
class TraceRecorder : public ::testing::Test {
 protected:
  void SetUp() override {
    Recorder::set_recording(false);
    (void)Recorder::drain();
  }
  void TearDown() override {
    Recorder::set_recording(false);
    Recorder::set_events_per_thread(Recorder::kDefaultEventsPerThread);
    (void)Recorder::drain();
  }
};

size_t total_events(const Drained& d) {
  size_t n = 0;
  for (const auto& t : d.threads) n += t.events.size();
  return n;
}

TEST_F(TraceRecorder, RecordsNothingWhileOff) {
  {
    Span s("idle", Kind::kCompute, {.bytes = 7});
    record("explicit", Kind::kSend, 1, 2);
    name_thread("nobody");
  }
  const Drained d = Recorder::drain();
  EXPECT_EQ(total_events(d), 0u);
  EXPECT_EQ(d.dropped, 0u);
}

TEST_F(TraceRecorder, KeepsSpansWithTheirArgumentsInOrder) {
  Recorder::set_recording(true);
  name_thread("lane", 3);
  {
    Span outer("outer", Kind::kPhase, {.step = 2});
    Span inner("send frame", Kind::kSend, {.peer = 1, .shard = 0, .blocks = 4});
    inner.set_bytes(1234);
  }
  Span early("early", Kind::kCompute);
  early.end();
  early.end();  // a second end records nothing
  record("explicit", Kind::kRecv, 100, 250, {.peer = 5, .bytes = 9});
  Recorder::set_recording(false);
  const Drained d = Recorder::drain();
  ASSERT_EQ(d.threads.size(), 1u);
  const ThreadEvents& t = d.threads[0];
  EXPECT_EQ(t.name, "lane 3");
  ASSERT_EQ(t.events.size(), 4u);
  // Spans close inner first.
  EXPECT_STREQ(t.events[0].name, "send frame");
  EXPECT_EQ(t.events[0].kind, Kind::kSend);
  EXPECT_EQ(t.events[0].args.peer, 1);
  EXPECT_EQ(t.events[0].args.shard, 0);
  EXPECT_EQ(t.events[0].args.bytes, 1234u);
  EXPECT_EQ(t.events[0].args.blocks, 4u);
  EXPECT_STREQ(t.events[1].name, "outer");
  EXPECT_EQ(t.events[1].args.step, 2);
  EXPECT_LE(t.events[1].begin_ns, t.events[0].begin_ns);
  EXPECT_GE(t.events[1].end_ns, t.events[0].end_ns);
  EXPECT_STREQ(t.events[2].name, "early");
  EXPECT_EQ(t.events[3].begin_ns, 100);
  EXPECT_EQ(t.events[3].end_ns, 250);
  // Drained means gone.
  EXPECT_EQ(total_events(Recorder::drain()), 0u);
}

TEST_F(TraceRecorder, EachThreadWritesItsOwnBuffer) {
  Recorder::set_recording(true);
  auto work = [](int which) {
    name_thread("worker", which);
    for (int i = 0; i < 100; ++i) Span s("step", Kind::kCompute, {.step = which});
  };
  std::thread a(work, 1), b(work, 2);
  a.join();
  b.join();
  Recorder::set_recording(false);
  const Drained d = Recorder::drain();
  ASSERT_EQ(d.threads.size(), 2u);
  EXPECT_NE(d.threads[0].thread, d.threads[1].thread);
  for (const auto& t : d.threads) {
    ASSERT_EQ(t.events.size(), 100u);
    const int which = t.events[0].args.step;
    EXPECT_EQ(t.name, "worker " + std::to_string(which));
    for (const auto& e : t.events) EXPECT_EQ(e.args.step, which);
  }
}

TEST_F(TraceRecorder, AFullBufferDropsAndCounts) {
  // The capacity applies to threads that record from now on.
  Recorder::set_events_per_thread(16);
  Recorder::set_recording(true);
  std::thread t([] {
    for (int i = 0; i < 40; ++i) Span s("step", Kind::kCompute, {.step = i});
  });
  t.join();
  Recorder::set_recording(false);
  Drained d = Recorder::drain();
  ASSERT_EQ(d.threads.size(), 1u);
  ASSERT_EQ(d.threads[0].events.size(), 16u);
  EXPECT_EQ(d.threads[0].events.back().args.step, 15);  // the first ones are kept
  EXPECT_EQ(d.dropped, 24u);
  // The count starts again after a drain.
  EXPECT_EQ(Recorder::drain().dropped, 0u);
}

TEST_F(TraceRecorder, ThreadNumbersAreStable) {
  const int id = Recorder::this_thread_id();
  EXPECT_EQ(Recorder::this_thread_id(), id);
  Recorder::set_recording(true);
  { Span s("x", Kind::kCompute); }
  Recorder::set_recording(false);
  const Drained d = Recorder::drain();
  ASSERT_EQ(d.threads.size(), 1u);
  EXPECT_EQ(d.threads[0].thread, id);
}

}  // namespace
}  // namespace omnib::trace
