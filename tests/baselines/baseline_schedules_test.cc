// The pure pieces of the CPU baselines: slices, the ring schedule, the
// recursive doubling plan and the cost models' invariants.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "baselines/common/even_partition.h"
#include "baselines/sparse/oktopk.h"
#include "baselines/dense/ring_allreduce.h"
#include "baselines/common/ring_schedule.h"
#include "baselines/sparse/sparcml_recdbl.h"
#include "baselines/sparse/sparcml_split.h"
#include "baselines/sparse/sparse_allgather.h"
#include "baselines/common/sparse_cost.h"
#include "engine/blocks/input_support.h"

namespace omnib {
namespace {

TEST(EvenSlice, CoversTheRangeWithoutGaps) {
  for (size_t count : {0u, 1u, 3u, 7u, 100003u})
    for (int n : {1, 2, 3, 5, 8}) {
      size_t next = 0;
      for (int i = 0; i < n; ++i) {
        Slice s = even_slice(count, n, i);
        EXPECT_EQ(s.begin, next);
        EXPECT_LE(s.length, count / n + 1);
        next = s.end();
      }
      EXPECT_EQ(next, count);
    }
}

TEST(RingSchedule, ForwardsWhatItReceivedAndEndsWithEverySegment) {
  for (int n : {2, 3, 4, 5, 7}) {
    for (int r = 0; r < n; ++r) {
      for (int g = 0; g + 1 < ring_steps(n); ++g) EXPECT_EQ(ring_recv_segment(r, n, g), ring_send_segment(r, n, g + 1));
      // The left neighbour sends what this rank expects.
      const int left = (r + n - 1) % n;
      for (int g = 0; g < ring_steps(n); ++g) EXPECT_EQ(ring_send_segment(left, n, g), ring_recv_segment(r, n, g));
      // The allgather delivers every segment except the one reduced here.
      std::set<int> got;
      for (int g = n - 1; g < ring_steps(n); ++g) got.insert(ring_recv_segment(r, n, g));
      EXPECT_EQ(got.size(), static_cast<size_t>(n - 1));
      EXPECT_EQ(got.count(ring_recv_segment(r, n, n - 2)), 0u);
    }
  }
}

TEST(RecursiveDoublingPlan, FoldsExtraRanks) {
  RecursiveDoublingPlan five(5);
  EXPECT_EQ(five.p, 4);
  EXPECT_EQ(five.rounds, 2);
  EXPECT_EQ(five.extras(), 1);
  auto pairs = five.pairs();
  std::set<std::pair<int, int>> set(pairs.begin(), pairs.end());
  EXPECT_TRUE(set.count({0, 4}));
  EXPECT_TRUE(set.count({0, 1}));
  EXPECT_TRUE(set.count({0, 2}));
  EXPECT_TRUE(set.count({1, 3}));
  EXPECT_EQ(set.size(), 5u);
  RecursiveDoublingPlan one(1);
  EXPECT_EQ(one.rounds, 0);
  EXPECT_TRUE(one.pairs().empty());
}

CostInputs inputs(int n, size_t count, double d, double u) {
  CostInputs c;
  c.nodes = n;
  c.count = count;
  c.elem_size = 4;
  c.stats.element_density = d;
  c.stats.union_element_density = u;
  return c;
}

TEST(BaselineCosts, RingMovesTwiceNMinusOneOverNOfTheTensor) {
  const size_t count = 1 << 20;  // divides by 4, 64K-element frames
  WireCost c = ring_analytic_cost(inputs(4, count, 1, 1));
  const double payload = 2.0 * 3 / 4 * count * 4;
  const double frames = 6 * 4;  // 6 steps of a 256K-element segment = 4 frames each
  EXPECT_DOUBLE_EQ(c.sent_per_rank_max, payload + frames * 32);
  EXPECT_DOUBLE_EQ(c.sent_total, 4 * c.sent_per_rank_max);
}

TEST(BaselineCosts, DenseInputsCostTheDenseVolumeInSparcml) {
  const size_t count = 1 << 20;
  const double ring = ring_analytic_cost(inputs(4, count, 1, 1)).sent_per_rank_max;
  const double split = sparcml_split_analytic_cost(inputs(4, count, 1, 1)).sent_per_rank_max;
  EXPECT_NEAR(split / ring, 1.0, 0.01);
  // Allgather always sends pairs: (n-1) pieces of count pairs of 8 bytes.
  const double allgather = allgather_analytic_cost(inputs(4, count, 1, 1)).sent_per_rank_max;
  EXPECT_NEAR(allgather, 3.0 * count * 8, 3.0 * count * 8 * 0.01);
  // Recursive doubling on 4 ranks: 2 rounds of the whole dense tensor.
  const double recdbl = sparcml_recdbl_analytic_cost(inputs(4, count, 1, 1)).sent_per_rank_max;
  EXPECT_NEAR(recdbl, 2.0 * count * 4, 2.0 * count * 4 * 0.01);
}

TEST(BaselineCosts, SparseCostsScaleWithDensity) {
  const size_t count = 1 << 22;
  for (int n : {3, 4, 5}) {
    const double d = 0.01;
    const double u = 1 - std::pow(1 - d, n);
    CostInputs c = inputs(n, count, d, u);
    EXPECT_NEAR(allgather_analytic_cost(c).sent_per_rank_max, (n - 1) * d * count * 8, 0.01 * count);
    EXPECT_LT(sparcml_split_analytic_cost(c).sent_per_rank_max, 0.1 * count * 4);
    EXPECT_LT(sparcml_recdbl_analytic_cost(c).sent_per_rank_max, 0.2 * count * 4);
  }
  EXPECT_DOUBLE_EQ(sparse_stream_bytes(0, 4), 48);
  EXPECT_DOUBLE_EQ(smaller_stream_bytes(10, 10, 4), 10 * 4 + 48);
}

// The models count the inputs only where the support describes them: the
// same ranks and the same count; otherwise they estimate.
TEST(BaselineCosts, ExactOnlyWithTheInputsOfTheSameShape) {
  const size_t count = 1000;
  InputSupport support(4, count);
  for (int r = 0; r < 4; ++r) {
    std::vector<float> t(count, 0.0f);
    for (int i = 0; i < 10 * (r + 1); ++i) t[static_cast<size_t>(i)] = 1.0f;  // k_r = 10, 20, 30, 40
    support.set_rank(r, t.data(), sizeof(float));
  }
  CostInputs c = inputs(4, count, 0.04, 0.04);
  c.support = &support;
  // Each rank sends every piece but its right neighbour's: pieces of
  // 8 k + 48 bytes, 992 in all; the busiest rank skips the smallest (128).
  WireCost w = allgather_analytic_cost(c);
  EXPECT_TRUE(w.exact);
  EXPECT_DOUBLE_EQ(w.sent_per_rank_max, 992 - 128);
  EXPECT_DOUBLE_EQ(w.sent_total, 3 * 992);
  for (CostInputs other : {inputs(4, 2 * count, 0.04, 0.04), inputs(3, count, 0.04, 0.04)}) {
    other.support = &support;
    EXPECT_FALSE(allgather_analytic_cost(other).exact);
    EXPECT_FALSE(sparcml_split_analytic_cost(other).exact);
    EXPECT_FALSE(sparcml_recdbl_analytic_cost(other).exact);
    EXPECT_FALSE(oktopk_analytic_cost(other).exact);
  }
}

}  // namespace
}  // namespace omnib
