// The Wilcoxon signed-rank test against values computed independently:
// exact p-values by enumerating every assignment of signs to the ranks
// (2^n outcomes), normal approximations from the textbook formula with the
// tie and continuity corrections. Fisher's data (Darwin's paired plants,
// differences in eighths of an inch) give W+ = 96, 676 of 32768 sign
// assignments reaching it.
#include "tools/compare/signed_rank.h"

#include <gtest/gtest.h>

namespace omnib {
namespace {

const std::vector<double> kDarwin{6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75};

TEST(SignedRank, ExactPValuesMatchEnumeration) {
  auto r = signed_rank_greater(kDarwin);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.n, 15u);
  EXPECT_DOUBLE_EQ(r.w_plus, 96);
  EXPECT_DOUBLE_EQ(r.p_value, 676.0 / 32768);

  const std::vector<double> mixed{0.5, -0.2, 1.1, 0.9, -0.4, 0.7, 1.3, 0.3};
  r = signed_rank_greater(mixed);
  EXPECT_DOUBLE_EQ(r.w_plus, 32);
  EXPECT_DOUBLE_EQ(r.p_value, 7.0 / 256);
  // The other direction: the mirrored differences.
  std::vector<double> mirrored;
  for (double d : mixed) mirrored.push_back(-d);
  r = signed_rank_greater(mirrored);
  EXPECT_DOUBLE_EQ(r.w_plus, 4);
  EXPECT_DOUBLE_EQ(r.p_value, 251.0 / 256);
}

TEST(SignedRank, AllPositiveReachTheSmallestP) {
  auto r = signed_rank_greater({0.1, 0.2, 0.3, 0.4, 0.5});
  EXPECT_DOUBLE_EQ(r.w_plus, 15);
  EXPECT_DOUBLE_EQ(r.p_value, 1.0 / 32);
  EXPECT_DOUBLE_EQ(signed_rank_min_p(5), 1.0 / 32);
  r = signed_rank_greater({-0.1, -0.2, -0.3, -0.4, -0.5});
  EXPECT_DOUBLE_EQ(r.w_plus, 0);
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);
}

TEST(SignedRank, ZerosAreDroppedAndTiesUseTheNormalApproximation) {
  // One zero (dropped), |d| tied at 1, 2 and 5.
  auto r = signed_rank_greater({0, 1, 2, 2, 3, -1, 4, -2, 5, 5, 6});
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.n, 10u);
  EXPECT_DOUBLE_EQ(r.w_plus, 49.5);
  EXPECT_NEAR(r.z, 2.2000713934155987, 1e-12);
  EXPECT_NEAR(r.p_value, 0.013900915060036266, 1e-12);
}

TEST(SignedRank, NormalApproximationWhenAsked) {
  auto r = signed_rank_greater({0.5, -0.2, 1.1, 0.9, -0.4, 0.7, 1.3, 0.3}, SignedRankMethod::kNormal);
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.z, 1.890378113437813, 1e-12);
  EXPECT_NEAR(r.p_value, 0.029353704215602513, 1e-12);
}

TEST(SignedRank, ExactAndNormalAgreeForManyPairs) {
  std::vector<double> d;
  for (int i = 1; i <= 40; ++i) d.push_back((i % 3 == 0 ? -1.0 : 1.0) * (i + 0.01 * i));
  auto exact = signed_rank_greater(d);
  auto normal = signed_rank_greater(d, SignedRankMethod::kNormal);
  ASSERT_TRUE(exact.exact);
  EXPECT_DOUBLE_EQ(exact.w_plus, normal.w_plus);
  EXPECT_NEAR(exact.p_value, normal.p_value, 0.005);
}

TEST(SignedRank, NoDifferencesGiveNoEvidence) {
  EXPECT_EQ(signed_rank_greater({}).p_value, 1);
  EXPECT_EQ(signed_rank_greater({0, 0, 0}).p_value, 1);
  EXPECT_EQ(signed_rank_greater({0, 0, 0}).n, 0u);
}

TEST(SignedRank, PairsNeededForAnAlpha) {
  EXPECT_EQ(signed_rank_pairs_needed(0.05), 5u);    // 1/32 = 0.031
  EXPECT_EQ(signed_rank_pairs_needed(0.01), 7u);    // 1/128 = 0.0078
  EXPECT_EQ(signed_rank_pairs_needed(1.0 / 32), 6u);  // strictly below: 1/32 itself is not enough
  EXPECT_EQ(signed_rank_pairs_needed(0.6), 1u);
}

}  // namespace
}  // namespace omnib
