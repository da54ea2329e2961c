#include "baselines/dense/tree_allreduce.h"

#include <algorithm>
#include <cstring>

#include "engine/blocks/reduce_ops.h"

namespace omnib {
namespace {

// Frame tags: partial sums go up with tag t, results come down with tag 2 + t.
uint32_t up_tag(int tree) { return static_cast<uint32_t>(tree); }
uint32_t down_tag(int tree) { return static_cast<uint32_t>(2 + tree); }

}  // namespace

TreeAllreduce::TreeAllreduce(const CollectiveSetup& setup, std::vector<PeerLinks> links)
    : OwnTransportBaseline(setup, std::move(links), 4, Indices::kNone),
      frames_(elem_size_),
      // Dedicated aggregator ranks are in neither tree.
      nodes_{job_.is_worker() ? double_tree_node(job_.nodes, 0, job_.rank) : TreeNode{},
             job_.is_worker() ? double_tree_node(job_.nodes, 1, job_.rank) : TreeNode{}} {}

Status TreeAllreduce::exchange() {
  signal().update([this] { frames_reduced_ = {}; });
  // Lanes 0, 1: up and down of tree 0; lanes 2, 3: of tree 1.
  return run_lanes([this](int lane) { return lane % 2 == 0 ? reduce_up(lane / 2) : broadcast_down(lane / 2); });
}

Status TreeAllreduce::recv_frame(int tree, int peer, uint32_t tag, size_t bytes, Frame& frame) {
  OMNIB_RETURN_IF_ERROR(links(tree).to(peer)->recv(frame));
  return check_dense_frame(frame, peer, seq(), tag, bytes, "tree " + std::to_string(tree), "tag");
}

Status TreeAllreduce::wait_reduced(int tree, uint64_t frames) {
  return signal().wait(
      [&] { return frames_reduced_[tree] >= frames; },
      [&] {
        return "the partial sums of tree " + std::to_string(tree) +
               " did not reach its root within the timeout (is a rank stuck? raise -T if it is only slow)";
      });
}

Status TreeAllreduce::send_frame(int tree, int peer, uint32_t tag, const uint8_t* data, size_t bytes) {
  return links(tree).to(peer)->send_bytes(wire::FrameType::kDense, tag, seq(), data, bytes);
}

// Frame by frame: own values + children[0]'s partial sum + children[1]'s, in
// that order, to the parent. A leaf sends its input as it is.
Status TreeAllreduce::reduce_up(int tree) {
  const TreeNode& node = nodes_[tree];
  Frame frame;
  for (size_t f = 0; f < frames_.count(half(tree).length); ++f) {
    const DenseFrames::Span span = frames_.frame(half(tree), f);
    const uint8_t* partial = in().as<const uint8_t>() + span.offset;
    if (!node.is_leaf()) {
      // The output holds the partial sum until the result comes down.
      uint8_t* dst = out().as<uint8_t>() + span.offset;
      if (dst != partial) std::memcpy(dst, partial, span.bytes);
      for (int child : node.children) {
        if (child < 0) continue;
        OMNIB_RETURN_IF_ERROR(recv_frame(tree, child, up_tag(tree), span.bytes, frame));
        add_into(dtype_, dst, frame.payload.data(), span.elements);
      }
      partial = dst;
    }
    if (node.parent >= 0)
      OMNIB_RETURN_IF_ERROR(send_frame(tree, node.parent, up_tag(tree), partial, span.bytes));
    else
      signal().update([&] { ++frames_reduced_[tree]; });
  }
  return Status::ok();
}

// Frame by frame: the result from the parent (at the root: the up lane's
// sum) into the output, then on to the children.
Status TreeAllreduce::broadcast_down(int tree) {
  const TreeNode& node = nodes_[tree];
  Frame frame;
  for (size_t f = 0; f < frames_.count(half(tree).length); ++f) {
    const DenseFrames::Span span = frames_.frame(half(tree), f);
    uint8_t* dst = out().as<uint8_t>() + span.offset;
    if (node.parent < 0) {
      OMNIB_RETURN_IF_ERROR(wait_reduced(tree, f + 1));
    } else {
      // The up lane has sent this frame's partial sum: the result depends on it.
      OMNIB_RETURN_IF_ERROR(recv_frame(tree, node.parent, down_tag(tree), span.bytes, frame));
      std::memcpy(dst, frame.payload.data(), span.bytes);
    }
    for (int child : node.children)
      if (child >= 0) OMNIB_RETURN_IF_ERROR(send_frame(tree, child, down_tag(tree), dst, span.bytes));
  }
  return Status::ok();
}

WireCost tree_analytic_cost(const CostInputs& c) {
  if (c.nodes <= 1 || c.count == 0) return {};
  const DenseFrames frames(c.elem_size);
  // Half t of the tensor crosses an edge of tree t.
  std::array<double, 2> edge_bytes{};
  for (int t = 0; t < 2; ++t)
    edge_bytes[static_cast<size_t>(t)] = frames.wire_bytes(static_cast<double>(even_slice(c.count, 2, t).length));
  return double_tree_cost(c.nodes, edge_bytes);
}

namespace {
const CollectiveRegistration kTree(own_transport_baseline<TreeAllreduce>(
    {"tree", "pipelined double binary tree allreduce (NCCL's tree algorithm) over our TCP transport, 256 KiB frames",
     false,
     [](int nodes) {
       return std::vector<PeerPairs>{double_tree_edges(nodes, 0), double_tree_edges(nodes, 1)};
     },
     tree_analytic_cost}));
}  // namespace

}  // namespace omnib
