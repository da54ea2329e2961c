// Pipelined double binary tree allreduce over our TCP transport: NCCL's tree
// algorithm (baselines/common/double_binary_tree.h). Tree t reduces half t of the
// tensor up to its root and broadcasts the root's sum back down, so every
// rank receives the root's bits. See docs/algorithms.md.
//
// Each tree has its own links (a pair that is an edge of both trees gets two
// connections) and two lanes on every rank: the up lane sums, frame by frame
// (about 256 KiB), the rank's own values and its children's partial sums and
// passes them to its parent; the down lane takes the result from the parent
// (or, at the root, from the up lane) and sends it on to the children. The
// four lanes of a rank run at once, so reduce and broadcast overlap and both
// trees share the links.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "baselines/common/double_binary_tree.h"
#include "baselines/common/even_partition.h"
#include "baselines/common/peer_links.h"
#include "engine/collective/collective.h"
#include "engine/lanes/lane_group.h"
#include "engine/transport/frame_format.h"

namespace omnib {

class TreeAllreduce final : public Collective {
 public:
  static constexpr size_t kFrameBytes = wire::kStreamFrameBytes;

  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup);
  ~TreeAllreduce() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override;

  static WireCost analytic_cost(const CostInputs& c);

 private:
  TreeAllreduce(const CollectiveSetup& setup, std::array<PeerLinks, 2> links);

  // The part of the tensor tree t reduces: half t of it.
  Slice half(int tree) const { return even_slice(in_.count, 2, tree); }
  size_t frames_of(size_t elements) const { return (elements + frame_elems_ - 1) / frame_elems_; }
  // Where frame f of tree t lies in the tensor.
  struct FrameSpan {
    size_t offset;  // bytes from the tensor's start
    size_t elements;
    size_t bytes;
  };
  FrameSpan span_of(int tree, size_t f) const;
  Status send_frame(int tree, int peer, uint32_t tag, const uint8_t* data, size_t bytes);
  Status reduce_up(int tree);
  Status broadcast_down(int tree);
  // Receives one dense frame of `bytes` bytes with `tag` from `peer` in tree `tree`.
  Status recv_frame(int tree, int peer, uint32_t tag, size_t bytes, Frame& frame);
  // Blocks until the root's up lane of tree t has finished `frames` frames.
  Status wait_reduced(int tree, uint64_t frames);
  void abort();

  JobLayout job_;
  DType dtype_;
  size_t elem_size_;
  size_t frame_elems_;
  std::chrono::milliseconds timeout_;
  std::array<PeerLinks, 2> links_;  // one link set per tree
  std::array<TreeNode, 2> nodes_;   // this rank's place in each tree
  std::unique_ptr<LaneGroup> lanes_;

  // Per-collective state, set before the lanes start.
  uint64_t seq_ = 0;
  TensorView in_;
  TensorView out_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::array<uint64_t, 2> frames_reduced_{};  // at a root: frames whose sum is final
  bool aborted_ = false;
};

}  // namespace omnib
