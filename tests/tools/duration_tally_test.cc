// Rank 0's running record of a --duration run: batches fold into the same
// outcome combine_rank_samples gives for all calls at once, in bounded memory.
#include "tools/measure/duration_tally.h"

#include <gtest/gtest.h>

namespace omnib {
namespace {

const RecordFrame kFrame{"omni", RunConfig{}, 0, 1, 2, true, 2};  // 2 runs, 2 workers

// One worker's samples of a batch of run `run`.
RankSamples worker(int run, std::vector<double> times, std::map<uint64_t, uint64_t> wrong = {}) {
  RankSamples s(2);
  s.calls_checked = times.size();
  s.cpu[static_cast<size_t>(run)] = {10.0 * static_cast<double>(times.size()), 0};
  s.wire = ByteCounters{100 * times.size(), 0, times.size(), 0};
  s.times_us[static_cast<size_t>(run)] = std::move(times);
  s.wrong = std::move(wrong);
  return s;
}

RankSamples aggregator() {
  RankSamples s(2);
  s.wire = ByteCounters{1000, 0, 1, 0};
  return s;
}

TEST(DurationTally, BatchesGiveWhatAllCallsAtOnceGive) {
  DurationTally tally(kFrame, 4.0);
  ASSERT_TRUE(tally.fold(0, {worker(0, {10, 30}), worker(0, {20, 5}, {{1, 3}}), aggregator()}, 0.5).is_ok());
  ASSERT_TRUE(tally.fold(0, {worker(0, {7}), worker(0, {8}), aggregator()}, 0.5).is_ok());
  ASSERT_TRUE(tally.fold(1, {worker(1, {40, 50}), worker(1, {1, 1}, {{4, 2}}), aggregator()}, 1.0).is_ok());
  ResultRecord r;
  tally.fill(true, r);
  EXPECT_EQ(std::multiset<double>(r.samples_us.begin(), r.samples_us.end()), (std::multiset<double>{20, 30, 8, 40, 50}));
  EXPECT_EQ(r.time_us.median, 30);
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].median_us, 20);
  EXPECT_EQ(r.runs[1].median_us, 45);
  EXPECT_EQ(r.wrong_calls, 2u);
  EXPECT_EQ(r.wrong_elements, 5u);
  EXPECT_EQ(r.first_wrong_call, 1u);
  EXPECT_EQ(r.correct, false);
  EXPECT_EQ(r.calls_checked, 5u);
  // The aggregator sent 1000 bytes in each of 3 batches over 5 timed calls.
  EXPECT_DOUBLE_EQ(*r.wire_sent_per_rank_max, 3000.0 / 5);
  EXPECT_DOUBLE_EQ(r.runs[0].cpu_us_per_call, 2 * 10.0 * 3 / 3);
  ASSERT_TRUE(r.duration.has_value());
  EXPECT_EQ(r.duration->timed_calls, 5u);
  EXPECT_DOUBLE_EQ(r.duration->elapsed_s, 2.0);
  EXPECT_DOUBLE_EQ(r.duration->requested_s, 4.0);
  EXPECT_TRUE(r.duration->complete);
  EXPECT_TRUE(r.duration->percentiles_exact);
  EXPECT_EQ(r.iters, 2);  // 5 timed calls over 2 runs
}

TEST(DurationTally, ACheckpointShowsOnlyTheRunsStarted) {
  DurationTally tally(kFrame, 4.0);
  ASSERT_TRUE(tally.fold(0, {worker(0, {10, 30}), worker(0, {20, 5})}, 0.5).is_ok());
  ResultRecord r;
  tally.fill(false, r);
  EXPECT_EQ(r.runs.size(), 1u);
  EXPECT_FALSE(r.duration->complete);
  EXPECT_EQ(r.correct, true);
}

TEST(DurationTally, WorkersThatTimedDifferentCallsAreAnError) {
  DurationTally tally(kFrame, 1.0);
  Status s = tally.fold(0, {worker(0, {10, 30}), worker(0, {20})}, 0.5);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.message();
}

TEST(DurationTally, MemoryStaysBoundedOverManyCalls) {
  DurationTally tally(RecordFrame{"omni", RunConfig{}, 0, 0, 1, true, 1}, 1.0);
  for (int b = 0; b < 2000; ++b) {
    RankSamples s(1);
    for (int i = 0; i < 256; ++i) s.times_us[0].push_back(100 + (b * 256 + i) % 97);
    ASSERT_TRUE(tally.fold(0, {s}, 0.001).is_ok());
  }
  ResultRecord r;
  tally.fill(true, r);
  EXPECT_EQ(r.duration->timed_calls, 512000u);
  EXPECT_EQ(r.samples_us.size(), kKeptSamples);
  EXPECT_FALSE(r.duration->percentiles_exact);
  EXPECT_NEAR(r.time_us.median, 148, 148 * TimeTally::kPercentileError + 1);
}

}  // namespace
}  // namespace omnib
