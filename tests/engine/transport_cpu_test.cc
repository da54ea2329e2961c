// The transport's CPU (engine/transport/transport_cpu.h): the lanes' part
// only while accounting is on, a network thread's whole, and a network
// thread's CPU still counted after it ended.
#include "engine/transport/transport_cpu.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace omnib {
namespace {

// Spins this thread for about `ms` of CPU.
void burn_cpu(int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
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
