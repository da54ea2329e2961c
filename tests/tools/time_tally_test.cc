// The bounded statistics of --duration runs: exact while every time is kept,
// within TimeTally::kPercentileError beyond, with a bounded uniform sample.
#include "tools/record/time_tally.h"

#include <gtest/gtest.h>

#include <random>

namespace omnib {
namespace {

std::vector<double> lognormal_times(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::lognormal_distribution<double> d(std::log(150.0), 0.4);
  std::vector<double> out(n);
  for (auto& x : out) x = d(rng);
  return out;
}

TEST(TimeTally, WhileEveryTimeIsKeptItIsSummarizeExactly) {
  const auto times = lognormal_times(500, 1);
  TimeTally tally(500);
  for (double t : times) tally.add(t);
  ASSERT_TRUE(tally.exact());
  const TimeStats want = summarize(times), got = tally.stats();
  EXPECT_EQ(got.median, want.median);
  EXPECT_EQ(got.p95, want.p95);
  EXPECT_EQ(got.p99, want.p99);
  EXPECT_EQ(got.min, want.min);
  EXPECT_EQ(got.max, want.max);
  EXPECT_EQ(tally.kept(), times);  // in call order while they all fit
}

TEST(TimeTally, BeyondTheKeptTimesPercentilesStayWithinTheStatedError) {
  const auto times = lognormal_times(200000, 2);
  TimeTally tally(1000);
  for (double t : times) tally.add(t);
  ASSERT_FALSE(tally.exact());
  EXPECT_EQ(tally.count(), times.size());
  EXPECT_EQ(tally.kept().size(), 1000u);
  const TimeStats want = summarize(times), got = tally.stats();
  for (auto [name, w, g] : {std::tuple{"median", want.median, got.median}, {"p95", want.p95, got.p95},
                            {"p99", want.p99, got.p99}})
    EXPECT_LE(std::abs(g - w) / w, TimeTally::kPercentileError) << name << ": " << g << " vs " << w;
  EXPECT_EQ(got.min, want.min);
  EXPECT_EQ(got.max, want.max);
  EXPECT_NEAR(got.mean, want.mean, want.mean * 1e-9);
  EXPECT_NEAR(got.stdev, want.stdev, want.stdev * 1e-6);
}

TEST(TimeTally, SkewedAndTiedTimesToo) {
  // Half the calls at 100 us, a tail up to 10 ms: the median sits on a tie.
  std::vector<double> times;
  for (int i = 0; i < 50000; ++i) times.push_back(100.0);
  for (int i = 0; i < 50000; ++i) times.push_back(100.0 + i * 0.2);
  TimeTally tally(100);
  for (double t : times) tally.add(t);
  const TimeStats want = summarize(times), got = tally.stats();
  for (auto [w, g] : {std::pair{want.median, got.median}, {want.p95, got.p95}, {want.p99, got.p99}})
    EXPECT_LE(std::abs(g - w) / w, TimeTally::kPercentileError) << g << " vs " << w;
}

TEST(TimeTally, TheKeptSampleIsUniformOverTheWholeRun) {
  // Times rise call after call: a sample of the first or last calls only
  // would have a mean far from the run's.
  TimeTally tally(2000);
  const size_t n = 400000;
  for (size_t i = 0; i < n; ++i) tally.add(1.0 + static_cast<double>(i));
  double sum = 0;
  for (double t : tally.kept()) sum += t;
  const double mean = sum / static_cast<double>(tally.kept().size());
  EXPECT_NEAR(mean, n / 2.0, n * 0.03);
}

TEST(TimeTally, TheSameTimesGiveTheSameSample) {
  TimeTally a(10), b(10);
  for (int i = 1; i <= 1000; ++i) a.add(i), b.add(i);
  EXPECT_EQ(a.kept(), b.kept());
}

}  // namespace
}  // namespace omnib
