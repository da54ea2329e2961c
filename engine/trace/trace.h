// The recording half of the profiler: what the engine and the baselines call
// to mark spans of their work (docs/profiling.md). The harness switches
// recording on and off and collects the events (engine/trace/trace_recorder.h);
// nothing here allocates, locks or prints.
//
// Cost: while recording is off, a Span costs one relaxed load and one
// predictable branch where it opens (and a test of a register where it
// closes). While on, closing a span appends one Event to a fixed-size buffer
// of the calling thread: no allocation, no lock (a thread's first event takes
// its buffer from the recorder, once per thread). A full buffer drops the
// event and counts it.
//
// Threads: any thread may record; each thread writes only its own buffer.
// Span names and thread roles must be string literals (the pointer is kept).
//
// Naming, which the analysis relies on (tools/trace/critical_path.h): a send
// of one frame is a kSend span "send X" and its receive a kRecv span
// "recv X" (same X), both with the other rank as `peer`, the shard where the
// link belongs to one, and the payload `bytes`; one span per frame.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>

namespace omnib::trace {

// What a span's time was spent on: the profile groups by it.
enum class Kind : uint8_t {
  kCompute = 0,  // the CPU or GPU working: block scan or compaction, reduce, scatter, copies
  kSend = 1,     // handing a frame to the transport (blocks while the link is full)
  kRecv = 2,     // waiting for and taking one frame from a peer
  kWait = 3,     // waiting for another lane of this rank (window space, input, a step's data)
  kBarrier = 4,  // waiting for every rank (the harness's barrier before a call)
  kBackend = 5,  // one opaque library call (Gloo, NCCL): its bytes, no inside
  kPhase = 6,    // groups other spans (a ring step, a round, a ps phase); not counted itself
  kCall = 7,     // one collective call, as the harness timed it
};
inline constexpr int kKinds = 8;

// Details a span carries; -1 / 0 mean "not applicable".
struct Args {
  int32_t peer = -1;   // rank at the other end of a send or receive
  int32_t shard = -1;  // omni shard
  int32_t step = -1;   // ring step, round, phase
  uint64_t bytes = 0;  // payload bytes sent or received (frame headers excluded)
  uint64_t blocks = 0;
};

struct Event {
  int64_t begin_ns = 0;  // steady_clock (CLOCK_MONOTONIC) of this process
  int64_t end_ns = 0;
  const char* name = nullptr;  // a string literal
  Args args;
  Kind kind = Kind::kCompute;
};

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace detail {
extern std::atomic<bool> g_recording;
void append(const Event& e);
void name_thread(const char* role, int index);
}  // namespace detail

// A track of its own, as a thread has, for work a thread does on behalf of
// another (LaneGroup runs its lane 0 on the calling thread): between enter()
// and leave() the calling thread's spans and name go to this track.
class Track {
 public:
  Track();
  void enter();
  void leave();

 private:
  void* buffer_;
  void* saved_ = nullptr;
};

inline bool recording() { return detail::g_recording.load(std::memory_order_relaxed); }

// Records a finished span from times the caller took with now_ns(): for work
// whose begin and end are not one scope (asynchronous I/O).
inline void record(const char* name, Kind kind, int64_t begin_ns, int64_t end_ns, const Args& args = {}) {
  if (recording()) [[unlikely]]
    detail::append(Event{begin_ns, end_ns, name, args, kind});
}

// Names the calling thread's track in the trace ("omni send", shard 2 ->
// "omni send 2"). Call at the top of a lane's body; the last name wins.
inline void name_thread(const char* role, int index = -1) {
  if (recording()) [[unlikely]]
    detail::name_thread(role, index);
}

// A span over the enclosing scope:
//   trace::Span span("send batch", trace::Kind::kSend, {.peer = p, .shard = s, .bytes = n});
class Span {
 public:
  Span(const char* name, Kind kind, const Args& args = {}) {
    if (recording()) [[unlikely]] {
      name_ = name;
      kind_ = kind;
      args_ = args;
      begin_ns_ = now_ns();
    }
  }
  ~Span() { end(); }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  // Closes the span before the scope does; later calls do nothing.
  void end() {
    if (name_) [[unlikely]] {
      detail::append(Event{begin_ns_, now_ns(), name_, args_, kind_});
      name_ = nullptr;
    }
  }
  // Drops the span: the attempt it covered did nothing (a full send window).
  void cancel() { name_ = nullptr; }
  // For what is known only at the end (the bytes of a received frame).
  void set_bytes(uint64_t bytes) { args_.bytes = bytes; }
  void set_blocks(uint64_t blocks) { args_.blocks = blocks; }
  // The bytes of a gathered payload, summed only while recording.
  void set_bytes_of(std::span<const iovec> parts) {
    if (!name_) return;
    args_.bytes = 0;
    for (const iovec& p : parts) args_.bytes += p.iov_len;
  }

 private:
  const char* name_ = nullptr;  // null: not recording
  Kind kind_ = Kind::kCompute;
  Args args_;
  int64_t begin_ns_ = 0;
};

}  // namespace omnib::trace
