// The control half of the profiler: the harness sets how many events a
// thread's buffer holds, switches recording on and off between calls, and
// drains every thread's events after a call (engine/trace/trace.h records).
//
// Threads: set_events_per_thread and drain must not run while any thread
// records (call them between collective calls, when the lanes are idle);
// set_recording may be called from any thread at any time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/trace/trace.h"

namespace omnib::trace {

// One thread's events since the last drain, in the order they closed.
struct ThreadEvents {
  int thread = 0;    // stable for the process: the order of the threads' first events
  std::string name;  // from name_thread(), or "" when it never named itself
  std::vector<Event> events;
};

struct Drained {
  std::vector<ThreadEvents> threads;  // threads with events, in `thread` order
  uint64_t dropped = 0;               // events lost to full buffers since the last drain
};

class Recorder {
 public:
  static constexpr size_t kDefaultEventsPerThread = 32768;

  // Capacity of the buffers of threads that record from now on (a thread
  // keeps the buffer it has). At least 1.
  static void set_events_per_thread(size_t events);
  static void set_recording(bool on);
  // The calling thread's number (its buffer is made now if it has none).
  static int this_thread_id();
  // Moves every thread's events out and empties the buffers.
  static Drained drain();
};

}  // namespace omnib::trace
