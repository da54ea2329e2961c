// Ok-Topk's sparse allreduce (Li and Hoefler, PPoPP'22), exact variant: the
// index space is cut into one region per worker by a balanced split
// (baselines/balanced_split.h: every region holds about the same number of
// non-zeros, from a histogram every rank contributes to); each rank sends
// every region's owner its part of that region (sparse pairs or dense,
// whichever is smaller); the owner sums the parts in rank order
// (baselines/rank_order_merge.h) and sends its reduced region to every
// other rank, again in the smaller form (as SparCML does). The paper's
// global top-k selection, which keeps only the k largest sums, is not part
// of it: the result is the exact sum. See docs/algorithms.md.
//
// Links form a full mesh among workers. Per peer a sender lane (histogram,
// the peer's part, then this rank's region) and a receiver lane
// (histograms, then the peer's reduced region); one merge lane reads every
// peer's part of this rank's region straight from the links.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "baselines/balanced_split.h"
#include "baselines/local_nonzeros.h"
#include "baselines/peer_links.h"
#include "baselines/rank_order_merge.h"
#include "baselines/sparse_vector.h"
#include "engine/collective.h"
#include "engine/lane_group.h"

namespace omnib {

class Oktopk final : public Collective {
 public:
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup);
  ~Oktopk() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override { return links_.wire_counters(); }

  static WireCost analytic_cost(const CostInputs& c);

 private:
  Oktopk(const CollectiveSetup& setup, PeerLinks links);

  Status send_to(size_t peer_index);
  Status receive_from(size_t peer_index);
  Status merge_my_region();
  // Called with mu_ held when a peer's counts of the current round are added.
  void count_received();
  // Waits, with `lock` held, until pred() or an abort; fails when nothing
  // progressed for a whole timeout.
  Status wait_until(std::unique_lock<std::mutex>& lock, const std::function<bool()>& pred, const std::string& what);
  void abort();

  JobLayout job_;
  DType dtype_;
  size_t elem_size_;
  std::chrono::milliseconds timeout_;
  PeerLinks links_;
  std::vector<int> peers_;  // every other worker rank
  std::unique_ptr<LaneGroup> lanes_;
  std::vector<SparseVector> piece_scratch_;  // one per sender lane
  RankOrderMerge merge_;

  // Per-collective state, set before the lanes start.
  uint64_t seq_ = 0;
  TensorView in_;
  TensorView out_;
  std::array<std::vector<uint32_t>, 2> my_counts_;  // this rank's histogram, per round
  LocalNonzeros nonzeros_;                          // this rank's non-zeros, found once per call

  std::mutex mu_;  // guards split_ and the fields below
  std::condition_variable cv_;
  BalancedSplit split_;
  int round_ = 0;                 // histogram round under way (0 or 1)
  size_t counts_received_ = 0;    // peers whose counts of round_ are added
  bool split_ready_ = false;      // boundaries known
  std::vector<bool> merged_;      // per peer: its part of this rank's region is read
  bool result_ready_ = false;
  bool aborted_ = false;
  std::atomic<uint64_t> progress_{0};  // anything that moved, so that waits time out only when stalled
  SparseVector result_scratch_;
  VectorView result_;
};

}  // namespace omnib
