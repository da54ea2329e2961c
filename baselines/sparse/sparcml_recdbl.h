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

#include <utility>
#include <vector>

#include "baselines/common/own_transport_baseline.h"
#include "baselines/common/sparse_vector.h"

namespace omnib {

// The rounds' structure, shared by the algorithm and its cost model.
struct RecursiveDoublingPlan {
  int n = 1;
  int p = 1;       // largest power of two <= n
  int rounds = 0;  // log2(p)
  explicit RecursiveDoublingPlan(int nodes);
  int extras() const { return n - p; }
  // Every pair of ranks that exchanges data, fold links included.
  PeerPairs pairs() const;
};

class SparcmlRecursiveDoubling final : public OwnTransportBaseline {
 public:
  SparcmlRecursiveDoubling(const CollectiveSetup& setup, std::vector<PeerLinks> links);

 private:
  Status exchange() override;
  // Sends acc_ to `peer` while receiving its vector into partner_, then merges.
  Status exchange_with(int peer, uint32_t tag);

  RecursiveDoublingPlan plan_;
  SparseVector acc_;      // this rank's running sum
  SparseVector partner_;  // the vector last received
  SparseVector scratch_;  // reused by merges
};

// The bytes one call puts on the wire (docs/algorithms.md).
WireCost sparcml_recdbl_analytic_cost(const CostInputs& c);

}  // namespace omnib
