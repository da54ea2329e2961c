// The transport's CPU (engine/transport/transport_cpu.h): the lanes' part
// only while accounting is on, a network thread's whole, and a network
// thread's CPU still counted after it ended.
#include "engine/transport/transport_cpu.h"

#include <gtest/gtest.h>

#include <time.h>

#include <cstdint>
#include <thread>

namespace omnib {
namespace {

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Spins this thread until it has had `ms` of CPU (by its own clock, so that
// a loaded host, which stretches the wall time, does not shorten it).
void burn_cpu(int ms) {
  const int64_t end = thread_cpu_ns() + int64_t{ms} * 1000000;
  volatile uint64_t x = 0;
  while (thread_cpu_ns() < end) x = x + 1;
}

TEST(TransportCpu, LaneWorkCountsOnlyWhileAccountingIsOn) {
  set_transport_cpu_accounting(false);
  const uint64_t before = transport_cpu_ns();
  {
    TransportWork work;
    burn_cpu(20);
  }
  EXPECT_LT(transport_cpu_ns() - before, 5'000'000u);

  set_transport_cpu_accounting(true);
  const uint64_t on = transport_cpu_ns();
  {
    TransportWork work;
    burn_cpu(20);
  }
  set_transport_cpu_accounting(false);
  EXPECT_GT(transport_cpu_ns() - on, 10'000'000u);
}

TEST(TransportCpu, ANetworkThreadCountsWholeAndAfterItEnded) {
  const uint64_t before = transport_cpu_ns();
  std::thread network([] {
    register_network_thread();
    burn_cpu(30);
    retire_network_thread();
  });
  network.join();
  EXPECT_GT(transport_cpu_ns() - before, 20'000'000u);
  // A thread that did not register is not the transport's.
  const uint64_t after = transport_cpu_ns();
  std::thread other([] { burn_cpu(30); });
  other.join();
  EXPECT_LT(transport_cpu_ns() - after, 10'000'000u);
}

}  // namespace
}  // namespace omnib
