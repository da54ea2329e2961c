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

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baselines/common/own_transport_baseline.h"
#include "baselines/common/owner_exchange.h"
#include "baselines/common/peer_stages.h"
#include "baselines/common/sparse_stream.h"

namespace omnib {

class SparcmlSplit final : public OwnTransportBaseline, private MeshLanes::Protocol {
 public:
  SparcmlSplit(const CollectiveSetup& setup, std::vector<PeerLinks> links);

 private:
  // What the receive lane reads from a peer: its part of this rank's slice
  // (parts_), then its reduced slice (owners_).
  enum class ReceiveStage { kPart, kSlice };

  Status exchange() override;
  Slice slice_of(int rank) const { return even_slice(in().count, job_.nodes, rank); }

  // MeshLanes::Protocol.
  Next start_next_stream(size_t i, StreamPoster& poster, LaneStep& step) override;
  void sends_finished() override;
  std::string send_data_stalled() const override;
  Result<LaneStep> receive_step() override;
  std::string receive_stalled() const override;
  // Takes what has arrived of the peers' parts and sums it into this
  // rank's slice; publishes the slice once every part is in.
  Result<bool> sum_parts();

  OwnerExchange owners_;
  // The send lane's.
  int64_t send_phase_begin_ = 0;
  bool sending_slices_ = false;
  // The receive lane's.
  PeerStages<ReceiveStage> stages_;
  std::vector<std::optional<ChunkReader>> parts_;  // each peer's part of this rank's slice
  Frame frame_;
  size_t parts_summed_ = 0;  // peers whose part of this rank's slice is summed
  int64_t receive_phase_begin_ = 0;
};

// The bytes one call puts on the wire (docs/algorithms.md).
WireCost sparcml_split_analytic_cost(const CostInputs& c);

}  // namespace omnib
