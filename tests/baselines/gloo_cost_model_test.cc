// The Gloo cost models replay Gloo's schedules; where the textbook formulas
// hold (even splits) they must agree with them exactly.
#include <gtest/gtest.h>

#include "baselines/gloo/gloo_catalog.h"
#include "baselines/gloo/gloo_cost_model.h"

namespace omnib {
namespace {

double data_bytes(const std::vector<GlooRankTraffic>& ranks, double* max_out = nullptr) {
  double total = 0, max = 0;
  for (const auto& r : ranks) {
    total += r.data_bytes;
    max = std::max(max, r.data_bytes);
  }
  if (max_out) *max_out = max;
  return total;
}

TEST(GlooBcubeBase, SmallestBaseWhosePowerIsTheNodeCount) {
  EXPECT_EQ(gloo_bcube_base(1), 2);
  EXPECT_EQ(gloo_bcube_base(2), 2);
  EXPECT_EQ(gloo_bcube_base(3), 3);
  EXPECT_EQ(gloo_bcube_base(4), 2);
  EXPECT_EQ(gloo_bcube_base(6), 6);
  EXPECT_EQ(gloo_bcube_base(8), 2);
  EXPECT_EQ(gloo_bcube_base(9), 3);
  EXPECT_EQ(gloo_bcube_base(27), 3);
  EXPECT_EQ(gloo_bcube_base(64), 2);
  EXPECT_FALSE(gloo_bcube_needs_barrier(5));
  EXPECT_TRUE(gloo_bcube_needs_barrier(4));
}

TEST(GlooCostModel, RingSendsTheWholeTensorNMinusOneTimes) {
  for (int n : {2, 3, 5, 8}) {
    auto ranks = gloo_rank_traffic(GlooAlgorithm::kRing, n, 1000, 4);
    ASSERT_EQ(ranks.size(), static_cast<size_t>(n));
    for (const auto& r : ranks) {
      EXPECT_EQ(r.data_bytes, (n - 1) * 4000.0);
      EXPECT_EQ(r.data_messages, n - 1);
      EXPECT_EQ(r.notifications, n - 1);
    }
  }
}

// With the count a multiple of every chunking, the reduce-scatter + allgather
// algorithms each send 2(n-1)/n of the tensor per rank.
TEST(GlooCostModel, EvenSplitsMatchTwoNMinusOneOverN) {
  const size_t count = 2 * 3 * 5 * 7 * 8 * 9 * 256;  // divisible by every 2n and power of two here
  for (GlooAlgorithm a : {GlooAlgorithm::kRingChunked, GlooAlgorithm::kHalvingDoubling, GlooAlgorithm::kBcube}) {
    for (int n : {2, 4, 8}) {
      double max = 0;
      const double total = data_bytes(gloo_rank_traffic(a, n, count, 4), &max);
      const double expected = 2.0 * (n - 1) / n * count * 4;
      EXPECT_DOUBLE_EQ(max, expected) << gloo_algorithm_name(a) << " n=" << n;
      EXPECT_DOUBLE_EQ(total, n * expected) << gloo_algorithm_name(a) << " n=" << n;
    }
  }
  for (int n : {3, 5, 6, 9}) {  // bcube at any count; ring-chunked too
    double max = 0;
    data_bytes(gloo_rank_traffic(GlooAlgorithm::kBcube, n, count, 4), &max);
    EXPECT_DOUBLE_EQ(max, 2.0 * (n - 1) / n * count * 4) << "bcube n=" << n;
    data_bytes(gloo_rank_traffic(GlooAlgorithm::kRingChunked, n, count, 4), &max);
    EXPECT_DOUBLE_EQ(max, 2.0 * (n - 1) / n * count * 4) << "ring-chunked n=" << n;
  }
}

// Not a power of two: the hand-over between binary blocks costs extra, so
// the busiest rank sends more than 2(n-1)/n of the tensor.
TEST(GlooCostModel, HalvingDoublingPaysForBinaryBlocks) {
  const size_t count = 1 << 20;
  double max = 0;
  data_bytes(gloo_rank_traffic(GlooAlgorithm::kHalvingDoubling, 3, count, 4), &max);
  EXPECT_DOUBLE_EQ(max, 1.5 * count * 4);  // half out, half to rank 2, half back in the allgather
  data_bytes(gloo_rank_traffic(GlooAlgorithm::kHalvingDoubling, 5, count, 4), &max);
  EXPECT_GT(max, 1.6 * count * 4);
}

TEST(GlooCostModel, HeadersAndDegenerateCases) {
  auto ranks = gloo_rank_traffic(GlooAlgorithm::kRing, 2, 10, 4);
  EXPECT_DOUBLE_EQ(ranks[0].wire_bytes(), 40 + kGlooPreambleBytes + kGlooPreambleBytes + kGlooNotificationBytes);
  for (GlooAlgorithm a : kAllGlooAlgorithms) {
    for (const auto& r : gloo_rank_traffic(a, 1, 1000, 4)) EXPECT_EQ(r.wire_bytes(), 0) << gloo_algorithm_name(a);
    for (const auto& r : gloo_rank_traffic(a, 4, 0, 4)) EXPECT_EQ(r.wire_bytes(), 0) << gloo_algorithm_name(a);
    // Fewer elements than ranks still sends something, and never negative.
    for (const auto& r : gloo_rank_traffic(a, 5, 3, 4)) EXPECT_GT(r.wire_bytes(), 0) << gloo_algorithm_name(a);
  }
  CostInputs c;
  c.nodes = 4;
  c.count = 1000;
  WireCost w = gloo_analytic_cost(GlooAlgorithm::kRing, c);
  EXPECT_DOUBLE_EQ(w.sent_total, 4 * w.sent_per_rank_max);
}

}  // namespace
}  // namespace omnib
