// SparCML's split allgather (SSAR_Split_allgather, Renggli et al., SC'19).
// Rank j owns the index slice j of n. Each rank sends every owner the part of
// its tensor in the owner's slice (sparse reduce-scatter), the owner sums what
// it receives into its own slice, then sends the reduced slice to every other
// rank (allgather). Every message is sparse pairs or dense, whichever is
// smaller (dense_is_smaller), so dense inputs cost what a dense algorithm does.
//
// Links form a full mesh among workers; each peer has a sender lane and a
// receiver lane, so all transfers run at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "baselines/peer_links.h"
#include "baselines/sparse_vector.h"
#include "engine/collective.h"
#include "engine/lane_group.h"

namespace omnib {

class SparcmlSplit final : public Collective {
 public:
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup);
  ~SparcmlSplit() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override { return links_.wire_counters(); }

  static WireCost analytic_cost(const CostInputs& c);

 private:
  SparcmlSplit(const CollectiveSetup& setup, PeerLinks links);

  Status send_to(size_t peer_index);
  Status receive_from(size_t peer_index);
  // Called, with mu_ held, by each receiver lane when its peer's part of this
  // rank's slice has been summed; the last one publishes the reduced slice.
  void contribution_done();
  Status wait_for_result();
  void abort();

  JobLayout job_;
  DType dtype_;
  size_t elem_size_;
  std::chrono::milliseconds timeout_;
  PeerLinks links_;
  std::vector<int> peers_;  // every other worker rank
  std::unique_ptr<LaneGroup> lanes_;
  std::vector<SparseVector> piece_scratch_;  // one per sender lane

  // Per-collective state, set before the lanes start.
  uint64_t seq_ = 0;
  TensorView in_;
  TensorView out_;

  std::mutex mu_;  // guards the sums into this rank's slice and the fields below
  std::condition_variable cv_;
  size_t contributions_ = 0;    // peers whose part of this rank's slice is summed
  uint64_t chunks_summed_ = 0;  // progress, so that waits time out only when stalled
  bool result_ready_ = false;
  bool aborted_ = false;
  SparseVector result_scratch_;
  VectorView result_;
};

}  // namespace omnib
