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
#include <chrono>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "baselines/common/balanced_split.h"
#include "baselines/common/local_nonzeros.h"
#include "baselines/common/mesh_lanes.h"
#include "baselines/common/peer_links.h"
#include "baselines/common/rank_order_merge.h"
#include "baselines/common/sparse_stream.h"
#include "baselines/common/sparse_vector.h"
#include "baselines/common/stream_poster.h"
#include "engine/collective/collective.h"

namespace omnib {

class Oktopk final : public Collective, private MeshLanes::Protocol {
 public:
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup);
  ~Oktopk() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override { return links_.wire_counters(); }

  static WireCost analytic_cost(const CostInputs& c);

 private:
  Oktopk(const CollectiveSetup& setup, PeerLinks links);

  // The stream the send lane starts next for a peer, in order.
  enum class SendStage { kCounts, kFineCounts, kPart, kRegion, kNone };
  struct PeerSend {
    SendStage stage = SendStage::kCounts;
    SparseVector part_scratch;  // the peer's part, when extracted as pairs
  };
  // What the receive lane reads from a peer.
  enum class ReceiveStage { kCounts, kCounted, kPart, kRegion, kDone };
  struct PeerReceive {
    ReceiveStage stage = ReceiveStage::kCounts;
    std::optional<ChunkReader> reader;  // counts of round_, or the reduced region
    bool zeroed = false;                // the peer's region is cleared for sparse chunks
  };

  // MeshLanes::Protocol.
  Next start_next_stream(size_t i, StreamPoster& poster, LaneStep& step) override;
  std::string send_data_stalled() const override;
  Result<LaneStep> receive_step() override;
  std::string receive_stalled() const override;

  // The receive lane's parts of a pass; each returns whether it moved.
  Result<bool> take_counts();
  void finish_round();
  Result<bool> merge_parts();
  Result<bool> take_regions();
  void write_region_chunk(size_t i, const Chunk& c);
  void set_stage(PeerReceive& r, ReceiveStage stage);
  std::vector<int> peers_in(std::initializer_list<ReceiveStage> stages) const;

  JobLayout job_;
  DType dtype_;
  size_t elem_size_;
  PeerLinks links_;
  std::unique_ptr<MeshLanes> lanes_;  // after links_: it detaches from them first

  // Per-collective state, set before the lanes start.
  uint64_t seq_ = 0;
  TensorView in_;
  TensorView out_;
  std::array<std::vector<uint32_t>, 2> my_counts_;  // this rank's histogram, per round
  LocalNonzeros nonzeros_;                          // this rank's non-zeros, found once per call
  // The send lane's.
  std::vector<PeerSend> sends_;
  // The receive lane's; stage changes under stage_mu_, which the send
  // lane's timeout message reads.
  mutable std::mutex stage_mu_;
  std::vector<PeerReceive> receives_;
  Frame frame_;
  size_t counted_ = 0;  // peers whose counts of round_ are added
  RankOrderMerge merge_;
  bool merging_ = false;
  size_t regions_written_ = 0;
  SparseVector result_scratch_;
  // Written by the receive lane before the flag that publishes it, read by
  // the send lane after it.
  BalancedSplit split_;
  std::atomic<int> round_{0};             // histogram round under way (0 or 1); my_counts_[1] set before 1
  std::atomic<bool> split_ready_{false};  // boundaries known
  VectorView result_;
  std::atomic<bool> result_ready_{false};  // this rank's region is reduced
};

}  // namespace omnib
