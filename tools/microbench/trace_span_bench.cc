// What a span costs the hot path (engine/trace/trace.h): nothing but a branch
// while recording is off, and two clock reads and a buffer store while on.
// Each iteration does a little work of its own (a dependent add chain) so the
// compiler cannot fold the span away; compare BM_SpanOff with BM_NoSpan.
#include <benchmark/benchmark.h>

#include "engine/trace/trace_recorder.h"

namespace omnib::bench {
namespace {

inline uint64_t work(uint64_t x) {
  for (int i = 0; i < 8; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

void BM_NoSpan(benchmark::State& state) {
  uint64_t x = 1;
  for (auto _ : state) {
    x = work(x);
    benchmark::DoNotOptimize(x);
  }
}

void BM_SpanOff(benchmark::State& state) {
  trace::Recorder::set_recording(false);
  uint64_t x = 1;
  for (auto _ : state) {
    trace::Span span("send batch", trace::Kind::kSend, {.peer = 1, .shard = 2, .blocks = 3});
    x = work(x);
    benchmark::DoNotOptimize(x);
  }
}

// Recording, drained outside the timed region whenever the buffer fills (as
// the harness drains it between calls), so no event is dropped.
void BM_SpanOn(benchmark::State& state) {
  constexpr size_t kBuffer = 1 << 16;
  trace::Recorder::set_events_per_thread(kBuffer);
  (void)trace::Recorder::drain();
  trace::Recorder::set_recording(true);
  uint64_t x = 1;
  size_t recorded = 0;
  for (auto _ : state) {
    {
      trace::Span span("send batch", trace::Kind::kSend, {.peer = 1, .shard = 2, .blocks = 3});
      x = work(x);
      benchmark::DoNotOptimize(x);
    }
    if (++recorded == kBuffer) {
      state.PauseTiming();
      trace::Recorder::set_recording(false);
      if (trace::Recorder::drain().dropped != 0) state.SkipWithError("events were dropped");
      trace::Recorder::set_recording(true);
      recorded = 0;
      state.ResumeTiming();
    }
  }
  trace::Recorder::set_recording(false);
  (void)trace::Recorder::drain();
}

BENCHMARK(BM_NoSpan);
BENCHMARK(BM_SpanOff);
BENCHMARK(BM_SpanOn);

}  // namespace
}  // namespace omnib::bench
