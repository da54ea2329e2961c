// Pipelined double binary tree allreduce over our own transport: NCCL's
// tree algorithm (baselines/common/double_binary_tree.h). Tree t reduces
// half t of the tensor up to its root and broadcasts the root's sum back
// down, so every rank receives the root's bits. See docs/algorithms.md.
//
// Each tree has its own links (a pair that is an edge of both trees gets two
// connections) and two lanes on every rank: the up lane sums, frame by frame
// (about 256 KiB, dense_frames.h), the rank's own values and its children's
// partial sums and passes them to its parent; the down lane takes the result
// from the parent (or, at the root, from the up lane) and sends it on to the
// children. The four lanes of a rank run at once, so reduce and broadcast
// overlap and both trees share the links.
#pragma once

#include <array>
#include <vector>

#include "baselines/common/dense_frames.h"
#include "baselines/common/double_binary_tree.h"
#include "baselines/common/own_transport_baseline.h"

namespace omnib {

class TreeAllreduce final : public OwnTransportBaseline {
 public:
  // `links`: one set per tree, tree 0's first.
  TreeAllreduce(const CollectiveSetup& setup, std::vector<PeerLinks> links);

 private:
  Status exchange() override;
  // The part of the tensor tree t reduces: half t of it.
  Slice half(int tree) const { return even_slice(in().count, 2, tree); }
  Status send_frame(int tree, int peer, uint32_t tag, const uint8_t* data, size_t bytes);
  Status reduce_up(int tree);
  Status broadcast_down(int tree);
  // Receives one dense frame of `bytes` bytes with `tag` from `peer` in tree `tree`.
  Status recv_frame(int tree, int peer, uint32_t tag, size_t bytes, Frame& frame);
  // Blocks until the root's up lane of tree t has finished `frames` frames.
  Status wait_reduced(int tree, uint64_t frames);

  DenseFrames frames_;
  std::array<TreeNode, 2> nodes_;             // this rank's place in each tree
  std::array<uint64_t, 2> frames_reduced_{};  // at a root: frames whose sum is final; under signal()
};

// The bytes one call puts on the wire (docs/algorithms.md).
WireCost tree_analytic_cost(const CostInputs& c);

}  // namespace omnib
