#include "tools/schedule/dense_schedules.h"

#include <algorithm>

#include "baselines/common/dense_frames.h"
#include "baselines/common/double_binary_tree.h"
#include "baselines/common/ring_schedule.h"
#include "tools/schedule/link_order.h"

namespace omnib {
namespace {

constexpr uint64_t kFrameHeaderBytes = sizeof(wire::FrameHeader);

}  // namespace

MessageSchedule ring_schedule(const ScheduleInputs& in) {
  const CostInputs& c = in.cost;
  const int n = c.nodes;
  MessageSchedule s(n);
  if (n <= 1 || c.count == 0) return s;
  const DenseFrames frames(c.elem_size);
  // prev[r]: rank r's messages of the step before, frame by frame.
  std::vector<std::vector<uint32_t>> prev(static_cast<size_t>(n)), cur(static_cast<size_t>(n));
  std::vector<LinkWindow> links(static_cast<size_t>(n), LinkWindow(kDenseLinkWindow));
  std::vector<MessageDep> deps;
  for (int g = 0; g < ring_steps(n); ++g) {
    for (int r = 0; r < n; ++r) {
      const int left = (r + n - 1) % n;
      const Slice seg = even_slice(c.count, n, ring_send_segment(r, n, g));
      auto& mine = cur[static_cast<size_t>(r)];
      mine.clear();
      for (size_t f = 0; f < frames.count(seg.length); ++f) {
        const DenseFrames::Span span = frames.frame(seg, f);
        deps.clear();
        double compute = 0;
        if (g > 0) {
          // What it forwards arrived from the left in the step before (the
          // same segment, so the same frames), summed in while reducing.
          deps.push_back({prev[static_cast<size_t>(left)][f], false});
          if (ring_step_reduces(n, g - 1)) compute = in.rates.reduce_s_per_byte * static_cast<double>(span.bytes);
        }
        links[static_cast<size_t>(r)].deps_for_next(deps);
        const uint32_t id = s.add(r, (r + 1) % n, span.bytes + kFrameHeaderBytes, deps, compute);
        links[static_cast<size_t>(r)].sent(id);
        mine.push_back(id);
      }
    }
    std::swap(prev, cur);
  }
  return s;
}

namespace {

// Ranks of one tree, deepest first: an order in which every child comes
// before its parent.
std::vector<int> deepest_first(int n, int tree) {
  std::vector<int> depth(static_cast<size_t>(n), 0);
  for (int r = 0; r < n; ++r)
    for (int p = double_tree_node(n, tree, r).parent; p >= 0; p = double_tree_node(n, tree, p).parent)
      ++depth[static_cast<size_t>(r)];
  std::vector<int> order(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) order[static_cast<size_t>(r)] = r;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return depth[static_cast<size_t>(a)] > depth[static_cast<size_t>(b)]; });
  return order;
}

}  // namespace

MessageSchedule tree_schedule(const ScheduleInputs& in) {
  const CostInputs& c = in.cost;
  const int n = c.nodes;
  MessageSchedule s(n);
  if (n <= 1 || c.count == 0) return s;
  const DenseFrames frames(c.elem_size);
  std::vector<MessageDep> deps;
  for (int t = 0; t < 2; ++t) {
    const Slice half = even_slice(c.count, 2, t);
    const std::vector<int> up_order = deepest_first(n, t);
    std::vector<TreeNode> nodes(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) nodes[static_cast<size_t>(r)] = double_tree_node(n, t, r);
    // Per rank: its link up, and one link down per child.
    std::vector<LinkWindow> up_links(static_cast<size_t>(n), LinkWindow(kDenseLinkWindow));
    std::vector<std::array<LinkWindow, 2>> down_links(
        static_cast<size_t>(n), {LinkWindow(kDenseLinkWindow), LinkWindow(kDenseLinkWindow)});
    std::vector<uint32_t> up(static_cast<size_t>(n)), down(static_cast<size_t>(n));
    for (size_t f = 0; f < frames.count(half.length); ++f) {
      const uint64_t bytes = frames.frame(half, f).bytes;
      // Up: own values plus each child's partial sum, to the parent; at the
      // root the sum is complete (a local step).
      for (int r : up_order) {
        const TreeNode& node = nodes[static_cast<size_t>(r)];
        deps.clear();
        for (int child : node.children)
          if (child >= 0) deps.push_back({up[static_cast<size_t>(child)], false});
        const double compute = in.rates.reduce_s_per_byte * static_cast<double>(bytes * node.child_count());
        if (node.parent < 0) {
          up[static_cast<size_t>(r)] = s.join(r, deps, compute);
          continue;
        }
        up_links[static_cast<size_t>(r)].deps_for_next(deps);
        up[static_cast<size_t>(r)] = s.add(r, node.parent, bytes + kFrameHeaderBytes, deps, compute);
        up_links[static_cast<size_t>(r)].sent(up[static_cast<size_t>(r)]);
      }
      // Down, parents before children: the result to each child.
      for (auto it = up_order.rbegin(); it != up_order.rend(); ++it) {
        const int r = *it;
        const TreeNode& node = nodes[static_cast<size_t>(r)];
        const uint32_t have = node.parent < 0 ? up[static_cast<size_t>(r)] : down[static_cast<size_t>(r)];
        for (size_t k = 0; k < 2; ++k) {
          const int child = node.children[k];
          if (child < 0) continue;
          deps.assign({{have, false}});
          down_links[static_cast<size_t>(r)][k].deps_for_next(deps);
          const uint32_t id = s.add(r, child, bytes + kFrameHeaderBytes, deps);
          down_links[static_cast<size_t>(r)][k].sent(id);
          down[static_cast<size_t>(child)] = id;
        }
      }
    }
  }
  return s;
}

}  // namespace omnib
