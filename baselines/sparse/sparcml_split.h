// SparCML's split allgather (SSAR_Split_allgather, Renggli et al., SC'19).
// Rank j owns the index slice j of n. Each rank sends every owner the part of
// its tensor in the owner's slice (sparse reduce-scatter), the owner sums what
// it receives into its own slice, then sends the reduced slice to every other
// rank (allgather). Every message is sparse pairs or dense, whichever is
// smaller (dense_is_smaller), so dense inputs cost what a dense algorithm does.
//
// Links form a full mesh among workers, served by two lanes whatever the
// job size (baselines/common/mesh_lanes.h): the send lane posts every peer's
// streams as their windows allow, the receive lane takes every peer's
// frames as they arrive and sums them into this rank's slice in the order
// they arrive.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "baselines/common/mesh_lanes.h"
#include "baselines/common/peer_links.h"
#include "baselines/common/sparse_stream.h"
#include "baselines/common/sparse_vector.h"
#include "baselines/common/stream_poster.h"
#include "engine/collective/collective.h"

namespace omnib {

class SparcmlSplit final : public Collective, private MeshLanes::Protocol {
 public:
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup);
  ~SparcmlSplit() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override { return links_.wire_counters(); }

  static WireCost analytic_cost(const CostInputs& c);

 private:
  SparcmlSplit(const CollectiveSetup& setup, PeerLinks links);

  // The stream the send lane starts next for a peer, in order.
  enum class SendStage { kPart, kSlice, kNone };
  struct PeerSend {
    SendStage stage = SendStage::kPart;
    SparseVector part_scratch;  // the peer's part, when it goes as pairs
  };
  // The stream the receive lane reads from a peer.
  enum class ReceiveStage { kPart, kSlice, kDone };
  struct PeerReceive {
    ReceiveStage stage = ReceiveStage::kPart;
    std::optional<ChunkReader> reader;
    bool wrote = false;  // some chunk of the peer's reduced slice is written
  };

  // MeshLanes::Protocol.
  Next start_next_stream(size_t i, StreamPoster& poster, LaneStep& step) override;
  void sends_finished() override;
  std::string send_data_stalled() const override;
  Result<LaneStep> receive_step() override;
  std::string receive_stalled() const override;

  // Sums a chunk of peer i's part into this rank's slice, or writes a chunk
  // of its reduced slice into the output.
  void apply_chunk(size_t i, const Chunk& c);
  // After the last part is summed: this rank's reduced slice, for the send lane.
  void publish_result();

  JobLayout job_;
  DType dtype_;
  size_t elem_size_;
  PeerLinks links_;
  std::unique_ptr<MeshLanes> lanes_;  // after links_: it detaches from them first

  // Per-collective state, set before the lanes start.
  uint64_t seq_ = 0;
  TensorView in_;
  TensorView out_;
  // The send lane's.
  std::vector<PeerSend> sends_;
  int64_t send_phase_begin_ = 0;
  bool sending_slices_ = false;
  // The receive lane's; stage changes under stage_mu_, which the send
  // lane's timeout message reads.
  mutable std::mutex stage_mu_;
  std::vector<PeerReceive> receives_;
  Frame frame_;
  size_t parts_summed_ = 0;    // peers whose part of this rank's slice is summed
  size_t slices_written_ = 0;  // peers whose reduced slice is written
  int64_t receive_phase_begin_ = 0;
  SparseVector result_scratch_;
  // Shared: the receive lane sets result_ before result_ready_.
  VectorView result_;
  std::atomic<bool> result_ready_{false};
};

}  // namespace omnib
