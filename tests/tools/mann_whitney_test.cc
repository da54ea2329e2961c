// The Mann-Whitney U test against values computed independently: exact
// p-values by enumerating every split of the pooled sample, normal
// approximations from the textbook formula (tie and continuity corrections,
// as scipy.stats.mannwhitneyu computes them; its documentation's example
// gives two-sided p = 0.1111 exact and 0.11134688653314041 asymptotic).
#include "tools/compare/mann_whitney.h"

#include <gtest/gtest.h>

namespace omnib {
namespace {

const std::vector<double> kMales{19, 22, 16, 29, 24};
const std::vector<double> kFemales{20, 11, 17, 12};

TEST(MannWhitney, ExactSmallSamples) {
  auto r = mann_whitney_greater(kMales, kFemales);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 17);
  EXPECT_NEAR(r.p_value, 0.1111111111111111 / 2, 1e-12);

  const std::vector<double> a{3.1, 4.7, 5.2, 6.0, 7.3, 8.8, 9.4};
  const std::vector<double> b{1.2, 2.5, 3.3, 4.1, 4.9, 5.5, 6.6, 7.0};
  r = mann_whitney_greater(a, b);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 41);
  EXPECT_NEAR(r.p_value, 0.075990675990676, 1e-12);
  r = mann_whitney_greater(b, a);
  EXPECT_DOUBLE_EQ(r.u, 15);
  EXPECT_NEAR(r.p_value, 0.9397047397047397, 1e-12);
}

TEST(MannWhitney, NormalApproximation) {
  auto r = mann_whitney_greater(kMales, kFemales, MannWhitneyMethod::kNormal);
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.z, 1.5921683328090657, 1e-12);
  EXPECT_NEAR(r.p_value, 0.11134688653314041 / 2, 1e-12);

  const std::vector<double> a{3.1, 4.7, 5.2, 6.0, 7.3, 8.8, 9.4};
  const std::vector<double> b{1.2, 2.5, 3.3, 4.1, 4.9, 5.5, 6.6, 7.0};
  r = mann_whitney_greater(a, b, MannWhitneyMethod::kNormal);
  EXPECT_NEAR(r.z, 1.4465939058946116, 1e-12);
  EXPECT_NEAR(r.p_value, 0.07400534701189086, 1e-12);
}

TEST(MannWhitney, TiesUseMidranksAndTheTieCorrection) {
  const std::vector<double> x{5, 5, 6, 7, 7, 8, 9, 9, 10};
  const std::vector<double> y{4, 5, 5, 6, 6, 7, 8, 8};
  auto r = mann_whitney_greater(x, y);
  EXPECT_FALSE(r.exact);  // ties: no exact table
  EXPECT_DOUBLE_EQ(r.u, 50);
  EXPECT_NEAR(r.z, 1.3177419641131825, 1e-12);
  EXPECT_NEAR(r.p_value, 0.09379502083179668, 1e-12);
}

TEST(MannWhitney, ExactAndNormalAgreeForLargeSamples) {
  std::vector<double> x, y;
  for (int i = 0; i < 40; ++i) {
    x.push_back(i * 1.0 + 6.5);
    y.push_back(i * 1.0 + 0.25);
  }
  auto exact = mann_whitney_greater(x, y);
  auto normal = mann_whitney_greater(x, y, MannWhitneyMethod::kNormal);
  ASSERT_TRUE(exact.exact);
  EXPECT_DOUBLE_EQ(exact.u, normal.u);
  EXPECT_NEAR(exact.p_value, normal.p_value, 0.01);
  EXPECT_LT(exact.p_value, 0.05);
}

TEST(MannWhitney, SeparatedSamplesAreSignificant) {
  std::vector<double> low, high;
  for (int i = 0; i < 10; ++i) {
    low.push_back(100 + i);
    high.push_back(200 + i);
  }
  auto r = mann_whitney_greater(high, low);
  EXPECT_DOUBLE_EQ(r.u, 100);
  EXPECT_NEAR(r.p_value, 1 / 184756.0, 1e-15);  // 1 / C(20,10): the one most extreme split
  EXPECT_NEAR(mann_whitney_greater(low, high).p_value, 1.0, 1e-12);
}

TEST(MannWhitney, DegenerateInputsGiveNoEvidence) {
  EXPECT_EQ(mann_whitney_greater({}, {1, 2}).p_value, 1);
  EXPECT_EQ(mann_whitney_greater({1, 2}, {}).p_value, 1);
  EXPECT_EQ(mann_whitney_greater({3, 3, 3}, {3, 3}).p_value, 1);
}

TEST(MannWhitney, SmallestReachablePValue) {
  EXPECT_NEAR(mann_whitney_min_p(10, 10), 5.412544112234515e-06, 1e-18);
  EXPECT_NEAR(mann_whitney_min_p(2, 2), 1 / 6.0, 1e-12);
  EXPECT_NEAR(mann_whitney_min_p(5, 4), 1 / 126.0, 1e-12);
  EXPECT_EQ(mann_whitney_min_p(0, 4), 1);
}

}  // namespace
}  // namespace omnib
