// Sparse allgather: what PyTorch (Gloo backend) and Horovod do for sparse
// gradients. Every worker extracts its non-zeros as (index, value) pairs,
// the pairs of all workers are allgathered around the ring i -> i+1 mod n,
// and every worker sums all of them into a zeroed output. Always sends pairs,
// even when a dense slice would be smaller (that is what those systems do).
//
// A sender lane forwards each received frame as soon as the receiver lane has
// stored it, so the n-1 ring steps are pipelined frame by frame. The count of
// pairs travels in every chunk header, so no separate size exchange is needed.
#pragma once

#include <deque>
#include <vector>

#include "baselines/common/own_transport_baseline.h"
#include "baselines/common/sparse_vector.h"

namespace omnib {

class SparseAllgather final : public OwnTransportBaseline {
 public:
  SparseAllgather(const CollectiveSetup& setup, std::vector<PeerLinks> links);

 private:
  // The frames received in one ring step, kept for forwarding in the next.
  struct StepFrames {
    std::deque<UninitBytes> payloads;
    bool complete = false;
  };

  Status exchange() override;
  int origin_of_step(int step) const;  // whose pairs this rank receives in `step`
  Status send_steps();
  // The i-th frame received in ring step `step` (nullptr once that step's
  // frames are all forwarded), as soon as the receive lane has it.
  Result<const UninitBytes*> frame_to_forward(int step, size_t i);
  Status receive_steps();

  SparseVector mine_;
  std::vector<StepFrames> steps_;  // under signal()
};

// The bytes one call puts on the wire (docs/algorithms.md).
WireCost allgather_analytic_cost(const CostInputs& c);

}  // namespace omnib
