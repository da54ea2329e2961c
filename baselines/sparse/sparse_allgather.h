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

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "baselines/common/peer_links.h"
#include "baselines/common/sparse_vector.h"
#include "engine/collective/collective.h"
#include "engine/lanes/lane_group.h"

namespace omnib {

class SparseAllgather final : public Collective {
 public:
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup);
  ~SparseAllgather() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override { return links_.wire_counters(); }

  static WireCost analytic_cost(const CostInputs& c);

 private:
  SparseAllgather(const CollectiveSetup& setup, PeerLinks links);

  // The frames received in one ring step, kept for forwarding in the next.
  struct StepFrames {
    std::deque<UninitBytes> payloads;
    bool complete = false;
  };

  int origin_of_step(int step) const;  // whose pairs this rank receives in `step`
  Status send_steps();
  Status receive_steps();
  void abort();

  JobLayout job_;
  DType dtype_;
  std::chrono::milliseconds timeout_;
  PeerLinks links_;
  std::unique_ptr<LaneGroup> lanes_;

  // Per-collective state, set before the lanes start.
  uint64_t seq_ = 0;
  TensorView out_;
  SparseVector mine_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<StepFrames> steps_;
  bool aborted_ = false;
};

}  // namespace omnib
