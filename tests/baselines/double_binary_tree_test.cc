// The double binary tree of the `tree` baseline: two trees over the same
// ranks, each a proper binary tree, built the way NCCL builds them
// (src/graph/trees.cc), complementary in their leaves.
#include "baselines/common/double_binary_tree.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

namespace omnib {
namespace {

// parent -> children of tree t over n ranks, as the edges list them.
std::map<int, std::set<int>> children_by_parent(int n, int t) {
  std::map<int, std::set<int>> out;
  for (auto [parent, child] : double_tree_edges(n, t)) out[parent].insert(child);
  return out;
}

class DoubleBinaryTreeShape : public ::testing::TestWithParam<int> {};

TEST_P(DoubleBinaryTreeShape, EachTreeIsABinaryTreeOverEveryRank) {
  const int n = GetParam();
  for (int t = 0; t < 2; ++t) {
    const int root = double_tree_root(n, t);
    EXPECT_EQ(double_tree_node(n, t, root).parent, -1) << "tree " << t;
    EXPECT_EQ(double_tree_edges(n, t).size(), static_cast<size_t>(n - 1)) << "tree " << t;
    for (int r = 0; r < n; ++r) {
      const TreeNode node = double_tree_node(n, t, r);
      EXPECT_LE(node.child_count(), 2);
      // Parent and children agree.
      if (r != root) {
        ASSERT_GE(node.parent, 0) << "tree " << t << " rank " << r;
        ASSERT_LT(node.parent, n);
        const TreeNode parent = double_tree_node(n, t, node.parent);
        EXPECT_TRUE(parent.children[0] == r || parent.children[1] == r) << "tree " << t << " rank " << r;
      }
      for (int c : node.children) {
        if (c < 0) continue;
        ASSERT_LT(c, n);
        EXPECT_EQ(double_tree_node(n, t, c).parent, r) << "tree " << t << " rank " << r << " child " << c;
      }
      // Walking up reaches the root within n steps: no cycle, one component.
      int at = r;
      for (int step = 0; step < n && at != root; ++step) at = double_tree_node(n, t, at).parent;
      EXPECT_EQ(at, root) << "tree " << t << " rank " << r;
    }
  }
}

TEST_P(DoubleBinaryTreeShape, LeavesOfOneTreeAreInteriorInTheOther) {
  const int n = GetParam();
  for (int r = 0; r < n; ++r) {
    const bool leaf0 = double_tree_node(n, 0, r).is_leaf();
    const bool leaf1 = double_tree_node(n, 1, r).is_leaf();
    // NCCL's shifted tree (odd n) leaves rank 0 interior in both.
    if (n % 2 == 1 && r == 0)
      EXPECT_FALSE(leaf0 || leaf1);
    else
      EXPECT_NE(leaf0, leaf1) << "rank " << r << " of " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DoubleBinaryTreeShape, ::testing::Range(2, 66));

// The trees drawn in NCCL's src/graph/trees.cc.
TEST(DoubleBinaryTree, MatchesNcclsBinaryTreeOf14Ranks) {
  const std::map<int, std::set<int>> expected{
      {0, {8}}, {8, {4, 12}}, {4, {2, 6}}, {12, {10, 13}}, {2, {1, 3}}, {6, {5, 7}}, {10, {9, 11}}};
  EXPECT_EQ(children_by_parent(14, 0), expected);
}

TEST(DoubleBinaryTree, MirrorsTreeZeroForAnEvenCount) {
  // 12 ranks: tree 1 is tree 0 with rank r playing 11 - r.
  const std::map<int, std::set<int>> expected{
      {11, {3}}, {3, {7, 1}}, {7, {9, 5}}, {1, {2, 0}}, {9, {10, 8}}, {5, {6, 4}}};
  EXPECT_EQ(children_by_parent(12, 1), expected);
  EXPECT_EQ(double_tree_root(12, 1), 11);
}

TEST(DoubleBinaryTree, ShiftsTreeZeroByOneForAnOddCount) {
  // 13 ranks: tree 1 is tree 0 with rank r playing r - 1.
  const std::map<int, std::set<int>> expected{
      {1, {9}}, {9, {5, 0}}, {5, {3, 7}}, {0, {11}}, {3, {2, 4}}, {7, {6, 8}}, {11, {10, 12}}};
  EXPECT_EQ(children_by_parent(13, 1), expected);
  EXPECT_EQ(double_tree_root(13, 1), 1);
}

TEST(DoubleBinaryTree, SmallCounts) {
  EXPECT_EQ(double_tree_edges(1, 0).size(), 0u);
  EXPECT_EQ(double_tree_edges(1, 1).size(), 0u);
  // Two ranks: each is the other's root.
  EXPECT_EQ(double_tree_node(2, 0, 1).parent, 0);
  EXPECT_EQ(double_tree_node(2, 1, 0).parent, 1);
  // Three ranks: two chains, 0 -> 2 -> 1 and 1 -> 0 -> 2.
  EXPECT_EQ(children_by_parent(3, 0), (std::map<int, std::set<int>>{{0, {2}}, {2, {1}}}));
  EXPECT_EQ(children_by_parent(3, 1), (std::map<int, std::set<int>>{{1, {0}}, {0, {2}}}));
}

// Each rank sends each half once to its parent and once to each child.
TEST(DoubleBinaryTree, CostCountsOneHalfPerEdgeEnd) {
  // Four ranks: tree 0 is 0 -> 2 -> {1, 3}, tree 1 is 3 -> 1 -> {0, 2}.
  // Rank 1, a leaf of tree 0, sends 1 + 2 halves of tree 1: the busiest.
  const WireCost c = double_tree_cost(4, {10.0, 100.0});
  EXPECT_DOUBLE_EQ(c.sent_per_rank_max, 1 * 10.0 + 3 * 100.0);
  // Every edge carries its half once each way: 2 * 3 edges per tree.
  EXPECT_DOUBLE_EQ(c.sent_total, 6 * 10.0 + 6 * 100.0);
}

}  // namespace
}  // namespace omnib
