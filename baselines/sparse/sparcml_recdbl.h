// SparCML's recursive doubling (SSAR_Recursive_double, Renggli et al., SC'19).
// In round k every rank exchanges its whole (partially reduced) vector with
// rank r XOR 2^k and merges the two, so after log2(n) rounds every rank holds
// the sum. Vectors grow as they merge and switch to the dense form once that
// is not larger (dense_is_smaller); from then on they stay dense.
//
// For n not a power of two, with p the largest power of two below n, the
// n - p extra ranks first fold their vector into rank r - p, sit out the
// rounds, and receive the final sum from rank r - p at the end.
#pragma once

#include <memory>
#include <vector>

#include "baselines/common/peer_links.h"
#include "baselines/common/sparse_vector.h"
#include "engine/collective/collective.h"
#include "engine/lanes/lane_group.h"

namespace omnib {

// The rounds' structure, shared by the algorithm and its cost model.
struct RecursiveDoublingPlan {
  int n = 1;
  int p = 1;       // largest power of two <= n
  int rounds = 0;  // log2(p)
  explicit RecursiveDoublingPlan(int nodes);
  int extras() const { return n - p; }
  // Every pair of ranks that exchanges data, fold links included.
  std::vector<std::pair<int, int>> pairs() const;
};

class SparcmlRecursiveDoubling final : public Collective {
 public:
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup);
  ~SparcmlRecursiveDoubling() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override { return links_.wire_counters(); }

  static WireCost analytic_cost(const CostInputs& c);

 private:
  SparcmlRecursiveDoubling(const CollectiveSetup& setup, PeerLinks links);

  Status run_steps(const TensorView& in, const TensorView& out);
  // Sends acc_ to `peer` while receiving its vector into partner_, then merges.
  Status exchange(int peer, uint32_t tag);

  JobLayout job_;
  DType dtype_;
  size_t elem_size_;
  RecursiveDoublingPlan plan_;
  PeerLinks links_;
  std::unique_ptr<LaneGroup> lanes_;

  uint64_t seq_ = 0;
  uint64_t count_ = 0;
  SparseVector acc_;      // this rank's running sum
  SparseVector partner_;  // the vector last received
  SparseVector scratch_;  // reused by merges
};

}  // namespace omnib
