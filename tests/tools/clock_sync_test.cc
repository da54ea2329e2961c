// Clock alignment (tools/trace/clock_sync.h) over in-process links: a rank
// whose clock runs ahead of rank 0's by a known amount must measure it,
// within the error bound it reports.
#include "tools/trace/clock_sync.h"

#include <gtest/gtest.h>

#include <thread>

#include "engine/transport/local_connection.h"

namespace omnib {
namespace {

constexpr int64_t kAhead = 5'000'000;  // 5 ms

Result<ClockOffset> measure(int64_t ahead_ns, const ClockReader& rank0_clock) {
  auto [rank0_end, rank1_end] = LocalConnection::make_pair(0, std::chrono::seconds(10));
  Status served;
  std::thread server([&, end = rank0_end.get()] { served = serve_clock_probes({end}, 8, rank0_clock); });
  auto offset = probe_clock(*rank1_end, 8, [ahead_ns] { return trace::now_ns() + ahead_ns; });
  server.join();
  EXPECT_TRUE(served.is_ok()) << served.message();
  return offset;
}

TEST(ClockSync, FindsAClockThatRunsAhead) {
  auto offset = measure(kAhead, trace::now_ns);
  ASSERT_TRUE(offset.is_ok()) << offset.status().message();
  const ClockOffset& o = offset.value();
  EXPECT_EQ(o.rounds, 8);
  EXPECT_GT(o.error_ns, 0);
  // The true offset lies within the reported error of the estimate.
  EXPECT_LE(std::abs(o.offset_ns - kAhead), o.error_ns) << o.offset_ns << " +- " << o.error_ns;
  EXPECT_LT(o.error_ns, 2'000'000) << "in-process round trips take microseconds, not milliseconds";
}

TEST(ClockSync, OneClockGivesZeroWithinTheError) {
  auto offset = measure(0, trace::now_ns);
  ASSERT_TRUE(offset.is_ok());
  EXPECT_LE(std::abs(offset.value().offset_ns), offset.value().error_ns);
}

// Only the fastest round trip counts: one slow answer (queueing) must not
// move the estimate.
TEST(ClockSync, KeepsTheProbeWithTheShortestRoundTrip) {
  int answers = 0;
  auto offset = measure(kAhead, [&answers] {
    // Rank 0 reads its clock late on every answer but one: as if each
    // reply sat in a queue before the reading was taken.
    // 20 ms: on a loaded host the fast probe alone took over 3 ms, so a
    // delay of 3 ms no longer told the kept probe from the others.
    if (answers++ != 5) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return trace::now_ns();
  });
  ASSERT_TRUE(offset.is_ok());
  EXPECT_LE(std::abs(offset.value().offset_ns - kAhead), offset.value().error_ns);
  // A delayed probe's error is at least half its delay.
  EXPECT_LT(offset.value().error_ns, 10'000'000);
}

TEST(ClockSync, AProbeOfTheWrongKindIsRefused) {
  auto [a, b] = LocalConnection::make_pair(0, std::chrono::seconds(5));
  uint64_t junk = 1;
  ASSERT_TRUE(b->send_bytes(wire::FrameType::kDense, 0, 0, &junk, sizeof(junk)).is_ok());
  Status s = serve_clock_probes({a.get()}, 1, trace::now_ns);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("clock probe"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace omnib
