#include "baselines/common/double_binary_tree.h"

#include <algorithm>

namespace omnib {

TreeNode binary_tree_node(int n, int rank) {
  TreeNode node;
  if (n <= 1) return node;
  // The lowest set bit of the rank; for rank 0 the first power of two >= n.
  int bit = 1;
  while (bit < n && (bit & rank) == 0) bit <<= 1;
  if (rank == 0) {
    node.children[1] = bit >> 1;  // the only child, in the second slot as in NCCL
    return node;
  }
  node.parent = (rank ^ bit) | (bit << 1);
  if (node.parent >= n) node.parent = rank ^ bit;
  const int half = bit >> 1;
  if (half == 0) return node;  // odd ranks are leaves
  node.children[0] = rank - half;
  int step = half;
  while (step > 0 && rank + step >= n) step >>= 1;
  node.children[1] = step > 0 ? rank + step : -1;
  return node;
}

TreeNode double_tree_node(int n, int tree, int rank) {
  if (tree == 0 || n <= 1) return binary_tree_node(n, rank);
  // Tree 1 relabels tree 0: rank r plays the part of rank `role` there.
  const bool mirror = n % 2 == 0;
  auto to_role = [&](int r) { return mirror ? n - 1 - r : (r - 1 + n) % n; };
  auto from_role = [&](int r) { return r < 0 ? -1 : (mirror ? n - 1 - r : (r + 1) % n); };
  const TreeNode played = binary_tree_node(n, to_role(rank));
  TreeNode node;
  node.parent = from_role(played.parent);
  node.children = {from_role(played.children[0]), from_role(played.children[1])};
  return node;
}

int double_tree_root(int n, int tree) {
  if (tree == 0 || n <= 1) return 0;
  return n % 2 == 0 ? n - 1 : 1;
}

std::vector<std::pair<int, int>> double_tree_edges(int n, int tree) {
  std::vector<std::pair<int, int>> edges;
  for (int r = 0; r < n; ++r) {
    const int parent = double_tree_node(n, tree, r).parent;
    if (parent >= 0) edges.push_back({parent, r});
  }
  return edges;
}

WireCost double_tree_cost(int n, const std::array<double, 2>& edge_bytes) {
  WireCost cost;
  if (n <= 1) return cost;
  for (int r = 0; r < n; ++r) {
    double sent = 0;
    for (int t = 0; t < 2; ++t) {
      const TreeNode node = double_tree_node(n, t, r);
      sent += ((node.parent >= 0 ? 1 : 0) + node.child_count()) * edge_bytes[static_cast<size_t>(t)];
    }
    cost.sent_per_rank_max = std::max(cost.sent_per_rank_max, sent);
    cost.sent_total += sent;
  }
  return cost;
}

}  // namespace omnib
