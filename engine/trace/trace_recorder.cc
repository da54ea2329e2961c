#include "engine/trace/trace_recorder.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>

namespace omnib::trace {
namespace {

// One thread's events. Only its thread writes `events` and `size`; the
// drainer reads them once the thread is idle (release/acquire on `size`).
struct ThreadBuffer {
  ThreadBuffer(size_t cap, int id)
      : events(static_cast<Event*>(std::malloc(cap * sizeof(Event)))), capacity(cap), thread(id) {
    if (!events) throw std::bad_alloc();
  }
  ~ThreadBuffer() { std::free(events); }
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  Event* events;  // raw storage: pages are touched only as events are written
  const size_t capacity;
  const int thread;
  std::atomic<size_t> size{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<const char*> role{nullptr};
  std::atomic<int> role_index{-1};
};

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;  // never shrinks: threads keep raw pointers
  size_t events_per_thread = Recorder::kDefaultEventsPerThread;
};

Registry& registry() {
  static Registry* r = new Registry;  // outlives every thread that may still record at exit
  return *r;
}

thread_local ThreadBuffer* tl_buffer = nullptr;

ThreadBuffer* new_buffer() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.buffers.push_back(std::make_unique<ThreadBuffer>(r.events_per_thread, static_cast<int>(r.buffers.size())));
  return r.buffers.back().get();
}

ThreadBuffer* this_thread_buffer() {
  if (tl_buffer) [[likely]]
    return tl_buffer;
  tl_buffer = new_buffer();
  return tl_buffer;
}

}  // namespace

Track::Track() : buffer_(new_buffer()) {}

void Track::enter() {
  saved_ = tl_buffer;
  tl_buffer = static_cast<ThreadBuffer*>(buffer_);
}

void Track::leave() { tl_buffer = static_cast<ThreadBuffer*>(saved_); }

namespace detail {

std::atomic<bool> g_recording{false};

void append(const Event& e) {
  ThreadBuffer* b = this_thread_buffer();
  const size_t n = b->size.load(std::memory_order_relaxed);
  if (n == b->capacity) [[unlikely]] {
    b->dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  b->events[n] = e;
  b->size.store(n + 1, std::memory_order_release);
}

void name_thread(const char* role, int index) {
  ThreadBuffer* b = this_thread_buffer();
  b->role.store(role, std::memory_order_relaxed);
  b->role_index.store(index, std::memory_order_relaxed);
}

}  // namespace detail

void Recorder::set_events_per_thread(size_t events) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.events_per_thread = std::max<size_t>(1, events);
}

void Recorder::set_recording(bool on) { detail::g_recording.store(on, std::memory_order_relaxed); }

int Recorder::this_thread_id() { return this_thread_buffer()->thread; }

Drained Recorder::drain() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  Drained out;
  for (const auto& b : r.buffers) {
    const size_t n = b->size.load(std::memory_order_acquire);
    out.dropped += b->dropped.exchange(0, std::memory_order_relaxed);
    if (n == 0) continue;
    ThreadEvents t;
    t.thread = b->thread;
    if (const char* role = b->role.load(std::memory_order_relaxed)) {
      t.name = role;
      const int index = b->role_index.load(std::memory_order_relaxed);
      if (index >= 0) {
        t.name += ' ';
        t.name += std::to_string(index);
      }
    }
    t.events.assign(b->events, b->events + n);
    b->size.store(0, std::memory_order_relaxed);
    out.threads.push_back(std::move(t));
  }
  return out;
}

}  // namespace omnib::trace
