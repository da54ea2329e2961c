#include "engine/transport/transport_cpu.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace omnib {
namespace {

std::atomic<bool> accounting{false};
std::atomic<uint64_t> lanes_ns{0};

struct NetworkThreads {
  std::mutex mu;
  std::vector<clockid_t> running;  // the clocks of the threads alive
  uint64_t retired_ns = 0;         // what the threads that ended took
};

NetworkThreads& network_threads() {
  static NetworkThreads* threads = new NetworkThreads();  // outlives every thread
  return *threads;
}

int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

clockid_t own_clock() {
  clockid_t clock = CLOCK_THREAD_CPUTIME_ID;
  pthread_getcpuclockid(pthread_self(), &clock);
  return clock;
}

}  // namespace

void set_transport_cpu_accounting(bool on) { accounting = on; }
bool transport_cpu_accounting() { return accounting; }

void register_network_thread() {
  NetworkThreads& t = network_threads();
  std::lock_guard lock(t.mu);
  t.running.push_back(own_clock());
}

void retire_network_thread() {
  const clockid_t clock = own_clock();
  NetworkThreads& t = network_threads();
  std::lock_guard lock(t.mu);
  auto it = std::find(t.running.begin(), t.running.end(), clock);
  if (it == t.running.end()) return;
  t.running.erase(it);
  t.retired_ns += static_cast<uint64_t>(clock_ns(CLOCK_THREAD_CPUTIME_ID));
}

TransportWork::TransportWork() {
  if (accounting.load(std::memory_order_relaxed)) start_ns_ = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

TransportWork::~TransportWork() {
  if (start_ns_ < 0) return;
  lanes_ns += static_cast<uint64_t>(std::max<int64_t>(0, clock_ns(CLOCK_THREAD_CPUTIME_ID) - start_ns_));
}

uint64_t transport_cpu_ns() {
  NetworkThreads& t = network_threads();
  std::lock_guard lock(t.mu);
  uint64_t ns = t.retired_ns + lanes_ns.load();
  for (clockid_t clock : t.running) ns += static_cast<uint64_t>(clock_ns(clock));
  return ns;
}

}  // namespace omnib
