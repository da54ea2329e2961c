#include "baselines/dense/tree_allreduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "baselines/common/own_transport_baseline.h"
#include "engine/blocks/reduce_ops.h"

namespace omnib {
namespace {

// Frame tags: partial sums go up with tag t, results come down with tag 2 + t.
uint32_t up_tag(int tree) { return static_cast<uint32_t>(tree); }
uint32_t down_tag(int tree) { return static_cast<uint32_t>(2 + tree); }

}  // namespace

Result<std::unique_ptr<Collective>> TreeAllreduce::create(const CollectiveSetup& setup) {
  // Every rank builds the same two plans, aggregator ranks included (they get no link).
  std::array<PeerLinks, 2> links;
  for (int t = 0; t < 2; ++t) {
    auto l = PeerLinks::establish(*setup.links, double_tree_edges(setup.job.nodes, t));
    if (!l.is_ok()) return l.status();
    links[t] = l.take();
  }
  return std::unique_ptr<Collective>(new TreeAllreduce(setup, std::move(links)));
}

TreeAllreduce::TreeAllreduce(const CollectiveSetup& setup, std::array<PeerLinks, 2> links)
    : job_(setup.job),
      dtype_(setup.dtype),
      elem_size_(dtype_size(setup.dtype)),
      frame_elems_(std::max<size_t>(1, kFrameBytes / elem_size_)),
      timeout_(setup.timeout),
      links_(std::move(links)),
      // Dedicated aggregator ranks are in neither tree.
      nodes_{job_.is_worker() ? double_tree_node(job_.nodes, 0, job_.rank) : TreeNode{},
             job_.is_worker() ? double_tree_node(job_.nodes, 1, job_.rank) : TreeNode{}},
      lanes_(std::make_unique<LaneGroup>(job_.is_worker() && job_.nodes > 1 ? 4 : 0)) {}

TreeAllreduce::~TreeAllreduce() {
  abort();
  lanes_.reset();
}

void TreeAllreduce::abort() {
  for (auto& l : links_) l.abort_all();
  std::lock_guard lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

std::optional<ByteCounters> TreeAllreduce::wire_counters() const {
  ByteCounters sum = links_[0].wire_counters();
  sum += links_[1].wire_counters();
  return sum;
}

Status TreeAllreduce::allreduce(const TensorView& in, const TensorView& out) {
  if (auto settled = settled_locally(job_, in, out)) return *settled;
  ++seq_;
  in_ = in;
  out_ = out;
  {
    std::lock_guard lock(mu_);
    frames_reduced_ = {};
  }
  // Lanes 0, 1: up and down of tree 0; lanes 2, 3: of tree 1.
  std::function<Status(int)> body = [this](int lane) {
    return lane % 2 == 0 ? reduce_up(lane / 2) : broadcast_down(lane / 2);
  };
  std::function<void()> on_failure = [this] { abort(); };
  return lanes_->run(body, on_failure);
}

Status TreeAllreduce::recv_frame(int tree, int peer, uint32_t tag, size_t bytes, Frame& frame) {
  OMNIB_RETURN_IF_ERROR(links_[tree].to(peer)->recv(frame));
  const wire::FrameHeader& h = frame.header;
  if (frame.type() != wire::FrameType::kDense || h.seq != seq_ || h.tag != tag || frame.payload.size() != bytes)
    return unavailable_error("rank " + std::to_string(peer) + " sent frame type " + std::to_string(h.type) +
                             ", collective " + std::to_string(h.seq) + ", tag " + std::to_string(h.tag) + ", " +
                             std::to_string(frame.payload.size()) + " bytes where tree " + std::to_string(tree) +
                             " expects a dense frame of collective " + std::to_string(seq_) + ", tag " +
                             std::to_string(tag) + ", " + std::to_string(bytes) + " bytes (ranks out of step?)");
  return Status::ok();
}

Status TreeAllreduce::wait_reduced(int tree, uint64_t frames) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout_, [&] { return aborted_ || frames_reduced_[tree] >= frames; }))
    return timeout_error("the partial sums of tree " + std::to_string(tree) +
                         " did not reach its root within the timeout (is a rank stuck? raise -T if it is only slow)");
  if (aborted_) return unavailable_error("aborted after another lane failed");
  return Status::ok();
}

TreeAllreduce::FrameSpan TreeAllreduce::span_of(int tree, size_t f) const {
  const Slice part = half(tree);
  const size_t first = part.begin + f * frame_elems_;
  const size_t len = std::min(frame_elems_, part.end() - first);
  return {first * elem_size_, len, len * elem_size_};
}

Status TreeAllreduce::send_frame(int tree, int peer, uint32_t tag, const uint8_t* data, size_t bytes) {
  return links_[tree].to(peer)->send_bytes(wire::FrameType::kDense, tag, seq_, data, bytes);
}

// Frame by frame: own values + children[0]'s partial sum + children[1]'s, in
// that order, to the parent. A leaf sends its input as it is.
Status TreeAllreduce::reduce_up(int tree) {
  const TreeNode& node = nodes_[tree];
  Frame frame;
  for (size_t f = 0; f < frames_of(half(tree).length); ++f) {
    const FrameSpan span = span_of(tree, f);
    const uint8_t* partial = static_cast<const uint8_t*>(in_.data) + span.offset;
    if (!node.is_leaf()) {
      // The output holds the partial sum until the result comes down.
      uint8_t* dst = static_cast<uint8_t*>(out_.data) + span.offset;
      if (dst != partial) std::memcpy(dst, partial, span.bytes);
      for (int child : node.children) {
        if (child < 0) continue;
        OMNIB_RETURN_IF_ERROR(recv_frame(tree, child, up_tag(tree), span.bytes, frame));
        add_into(dtype_, dst, frame.payload.data(), span.elements);
      }
      partial = dst;
    }
    if (node.parent >= 0) {
      OMNIB_RETURN_IF_ERROR(send_frame(tree, node.parent, up_tag(tree), partial, span.bytes));
    } else {
      std::lock_guard lock(mu_);
      ++frames_reduced_[tree];
      cv_.notify_all();
    }
  }
  return Status::ok();
}

// Frame by frame: the result from the parent (at the root: the up lane's
// sum) into the output, then on to the children.
Status TreeAllreduce::broadcast_down(int tree) {
  const TreeNode& node = nodes_[tree];
  Frame frame;
  for (size_t f = 0; f < frames_of(half(tree).length); ++f) {
    const FrameSpan span = span_of(tree, f);
    uint8_t* dst = static_cast<uint8_t*>(out_.data) + span.offset;
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

WireCost TreeAllreduce::analytic_cost(const CostInputs& c) {
  if (c.nodes <= 1 || c.count == 0) return {};
  const double frame_elems = static_cast<double>(std::max<size_t>(1, kFrameBytes / c.elem_size));
  // A half of k elements crosses an edge in ceil(k / frame_elems) frames.
  std::array<double, 2> edge_bytes{};
  for (int t = 0; t < 2; ++t) {
    const double k = static_cast<double>(even_slice(c.count, 2, t).length);
    edge_bytes[static_cast<size_t>(t)] = k * static_cast<double>(c.elem_size) + std::ceil(k / frame_elems) * sizeof(wire::FrameHeader);
  }
  return double_tree_cost(c.nodes, edge_bytes);
}

namespace {
const CollectiveRegistration kTree(own_transport_baseline(
    "tree", "pipelined double binary tree allreduce (NCCL's tree algorithm) over our TCP transport, 256 KiB frames",
    false, TreeAllreduce::create, TreeAllreduce::analytic_cost));
}  // namespace

}  // namespace omnib
