#include "tools/trace/trace_collector.h"

#include "tools/measure/call_breakdown.h"
#include "tools/trace/clock_sync.h"

namespace omnib {

Status TraceCollector::start(LinkFactory& links, int rank, int world, bool worker, const std::string& host) {
  if (!active()) return Status::ok();
  trace::Recorder::set_events_per_thread(options_.events_per_thread);
  spans_.rank = rank;
  spans_.worker = worker;
  spans_.host = host;
  harness_thread_ = trace::Recorder::this_thread_id();
  spans_.thread_names[harness_thread_] = "harness";
  if (options_.trace_path.empty()) return Status::ok();
  auto offset = align_clock_to_rank0(links, rank, world);
  if (!offset.is_ok()) return offset.status();
  spans_.clock = offset.value();
  return Status::ok();
}

bool TraceCollector::traced(bool timed, uint64_t iteration) const {
  return timed && (options_.trace_iters == 0 || iteration < static_cast<uint64_t>(options_.trace_iters));
}

CallTiming::Clock::time_point TraceCollector::before_call(bool timed, uint64_t iteration) const {
  if (active()) trace::Recorder::set_recording(!timed || traced(timed, iteration));
  return CallTiming::Clock::now();
}

int64_t TraceCollector::aligned(CallTiming::Clock::time_point t) const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count() - spans_.clock.offset_ns;
}

Status TraceCollector::after_call(const CallTiming& call, RankSamples& samples) {
  if (!active()) return Status::ok();
  trace::Recorder::set_recording(false);
  trace::Drained drained = trace::Recorder::drain();
  if (!traced(call.timed, call.iteration)) return Status::ok();

  CallSpans spans;
  spans.algo = call.algo;
  spans.size_bytes = call.size_bytes;
  spans.iteration = call.iteration;
  spans.spans.push_back({harness_thread_, "barrier", trace::Kind::kBarrier, aligned(call.barrier_begin),
                         aligned(call.barrier_end), {}});
  spans.spans.push_back({harness_thread_, "allreduce", trace::Kind::kCall, aligned(call.call_begin),
                         aligned(call.call_end), {}});
  for (auto& thread : drained.threads) {
    // A lane belongs to one algorithm's collective; the harness's thread to all.
    if (thread.thread != harness_thread_)
      spans_.thread_names[thread.thread] =
          call.algo + ": " + (thread.name.empty() ? "thread " + std::to_string(thread.thread) : thread.name);
    for (const trace::Event& e : thread.events)
      spans.spans.push_back({thread.thread, e.name, e.kind, e.begin_ns - spans_.clock.offset_ns,
                             e.end_ns - spans_.clock.offset_ns, e.args});
  }
  samples.dropped_events += drained.dropped;
  spans_.dropped += drained.dropped;
  if (options_.profile) {
    auto breakdown = break_down_call(spans.spans);
    if (!breakdown.is_ok()) return breakdown.status().with_context("--profile: ");
    samples.profile.push_back({call.iteration, breakdown.value()});
  }
  if (!options_.trace_path.empty()) spans_.calls.push_back(std::move(spans));
  return Status::ok();
}

RankTrace TraceCollector::take_spans() {
  RankTrace out;
  out.rank = spans_.rank;
  out.worker = spans_.worker;
  out.host = spans_.host;
  out.clock = spans_.clock;
  out.thread_names = spans_.thread_names;
  out.dropped = spans_.dropped;
  out.calls = std::move(spans_.calls);
  spans_.calls.clear();
  spans_.dropped = 0;
  return out;
}

}  // namespace omnib
