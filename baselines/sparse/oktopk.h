// Ok-Topk's sparse allreduce (Li and Hoefler, PPoPP'22), exact variant: the
// index space is cut into one region per worker by a balanced split
// (baselines/common/balanced_split.h: every region holds about the same number of
// non-zeros, from a histogram every rank contributes to); each rank sends
// every region's owner its part of that region (sparse pairs or dense,
// whichever is smaller); the owner sums the parts in rank order
// (baselines/common/rank_order_merge.h) and sends its reduced region to every
// other rank, again in the smaller form (as SparCML does). The paper's
// global top-k selection, which keeps only the k largest sums, is not part
// of it: the result is the exact sum. See docs/algorithms.md.
//
// Links form a full mesh among workers, served by two lanes whatever the
// job size (baselines/common/mesh_lanes.h): the send lane posts to every peer
// (histogram counts, the peer's part, then this rank's reduced region) as
// the windows allow; the receive lane takes every peer's counts, merges
// every peer's part of this rank's region straight from the links, and
// writes every peer's reduced region, as the frames arrive.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baselines/common/balanced_split.h"
#include "baselines/common/local_nonzeros.h"
#include "baselines/common/own_transport_baseline.h"
#include "baselines/common/owner_exchange.h"
#include "baselines/common/peer_stages.h"
#include "baselines/common/rank_order_merge.h"
#include "baselines/common/sparse_stream.h"
#include "baselines/common/sparse_vector.h"

namespace omnib {

class Oktopk final : public OwnTransportBaseline, private MeshLanes::Protocol {
 public:
  Oktopk(const CollectiveSetup& setup, std::vector<PeerLinks> links);

 private:
  // The streams the send lane starts next for a peer: the histogram
  // counts, the fine counts when a fine round follows, then the owners'
  // exchange (owners_).
  enum class SendStage { kCounts, kFineCounts, kOwners };
  // What the receive lane reads from a peer: its counts of round_ (counts_),
  // its part of this rank's region (merge_), its reduced region (owners_).
  enum class ReceiveStage { kCounts, kCounted, kPart, kRegion };

  Status exchange() override;

  // MeshLanes::Protocol.
  Next start_next_stream(size_t i, StreamPoster& poster, LaneStep& step) override;
  std::string send_data_stalled() const override;
  Result<LaneStep> receive_step() override;
  std::string receive_stalled() const override;

  // The receive lane's parts of a pass; each returns whether it moved.
  Result<bool> take_counts();
  void finish_round();
  void expect_counts(uint32_t tag);
  Result<bool> merge_parts();

  // Per-collective state, set before the lanes start.
  std::array<std::vector<uint32_t>, 2> my_counts_;  // this rank's histogram, per round
  LocalNonzeros nonzeros_;                          // this rank's non-zeros, found once per call
  OwnerExchange owners_;
  // The send lane's.
  std::vector<SendStage> sends_;
  // The receive lane's.
  PeerStages<ReceiveStage> stages_;
  std::vector<std::optional<ChunkReader>> counts_;  // each peer's counts of round_
  Frame frame_;
  size_t counted_ = 0;  // peers whose counts of round_ are added
  RankOrderMerge merge_;
  bool merging_ = false;
  // Written by the receive lane before the flag that publishes it, read by
  // the send lane after it.
  BalancedSplit split_;
  std::atomic<int> round_{0};             // histogram round under way (0 or 1); my_counts_[1] set before 1
  std::atomic<bool> split_ready_{false};  // boundaries known
};

// The bytes one call puts on the wire (docs/algorithms.md).
WireCost oktopk_analytic_cost(const CostInputs& c);

}  // namespace omnib
