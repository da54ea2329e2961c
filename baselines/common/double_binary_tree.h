// NCCL's double binary tree (Sanders, Speck and Traeff's two-tree scheme as
// NCCL builds it in src/graph/trees.cc): two binary trees over ranks
// [0, n) such that a leaf of one tree is an interior node of the other, so
// that every rank's links carry about the same load.
//
// Tree 0 is a binary tree rooted at rank 0 built on the bits of the rank:
// rank r with lowest set bit b hangs below (r ^ b) | 2b (or r ^ b when that
// is out of range) and has children r - b/2 and r + b', b' the largest of
// b/2, b/4, ... that stays below n. Rank 0 has a single child, the largest
// power of two below n. Tree 1 is tree 0 mirrored (rank r plays n-1-r) when
// n is even and shifted by one (rank r plays r-1 mod n) when n is odd. For
// even n every rank is a leaf in exactly one tree; for odd n so is every
// rank but 0, which is interior in both (as in NCCL).
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "engine/collective/collective.h"

namespace omnib {

struct TreeNode {
  int parent = -1;                   // -1 at the root
  std::array<int, 2> children{-1, -1};  // -1 where there is none; children[0] < children[1] in tree 0

  int child_count() const { return (children[0] >= 0 ? 1 : 0) + (children[1] >= 0 ? 1 : 0); }
  bool is_leaf() const { return child_count() == 0; }
};

// Rank `rank`'s place in tree 0 over n ranks.
TreeNode binary_tree_node(int n, int rank);

// Rank `rank`'s place in tree `tree` (0 or 1) of the double binary tree.
TreeNode double_tree_node(int n, int tree, int rank);

// The root of tree `tree`: 0 for tree 0; n-1 (n even) or 1 (n odd) for tree 1.
int double_tree_root(int n, int tree);

// The (parent, child) edges of tree `tree`, for PeerLinks::establish.
std::vector<std::pair<int, int>> double_tree_edges(int n, int tree);

// Bytes an allreduce over both trees sends, when one tree's half crossing
// one edge costs edge_bytes[tree]: a rank sends its half of each tree once
// up to its parent and once down to each child. Per rank max and total.
WireCost double_tree_cost(int n, const std::array<double, 2>& edge_bytes);

}  // namespace omnib
