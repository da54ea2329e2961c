// The reduce to region owners and the allgather of the reduced regions that
// sparcml-split and oktopk are made of, on mesh lanes (mesh_lanes.h). Each
// worker owns a region of the index space (the algorithm says which).
//   Send lane: to every peer, this rank's part of the peer's region (in the
//   form the algorithm extracts: the smaller of pairs and dense), then, once
//   published, this rank's reduced region.
//   Receive lane: the algorithm sums the peers' parts of this rank's region
//   its own way (in arrival order, in rank order) and publishes the sum,
//   re-extracted in the smaller form (dense_is_smaller: elements that
//   cancelled are not sent); meanwhile this writes every peer's reduced
//   region into the output as its frames arrive (a sparse region leaves
//   zeros where it has no pair).
// Threads: start() before the lanes run; start_stream() on the send lane,
// which reads the published view only after the flag that publishes it;
// the rest on the receive lane.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "baselines/common/even_partition.h"
#include "baselines/common/mesh_lanes.h"
#include "baselines/common/sparse_stream.h"
#include "baselines/common/sparse_vector.h"
#include "baselines/common/stream_poster.h"

namespace omnib {

class OwnerExchange {
 public:
  struct Plan {
    int rank = 0;  // this rank
    uint32_t part_tag = 0;
    uint32_t region_tag = 0;
    // A rank's region; asked for only once the regions are known (the
    // algorithm starts no stream of this exchange before).
    std::function<Slice(int rank)> region_of;
    // This rank's values in `region` as they go on the wire; `scratch`
    // may hold them. Must stay valid until the call ends.
    std::function<VectorView(Slice region, SparseVector& scratch)> part_of;
    std::string what;  // names the region streams in error messages
  };

  // At a call's start: the peers of `lanes`, the call's output and seq.
  void start(MeshLanes& lanes, const TensorView& out, uint64_t seq, Plan plan);

  // Send lane: starts peer i's next stream (its part, then this rank's
  // reduced region), says that the region is not yet published, or that
  // both are started (kNone).
  MeshLanes::Protocol::Next start_stream(size_t i, StreamPoster& poster, LaneStep& step);
  // Peer i's next stream is this rank's reduced region.
  bool region_next(size_t i) const { return sends_[i].stage == SendStage::kRegion; }

  // Receive lane: this rank's region of the output holds the sum; wakes
  // the send lane.
  void publish();
  bool published() const { return published_; }
  // Receive lane: peer i's reduced region follows on its link.
  void expect(size_t i);
  // Receive lane: writes what has arrived of the expected regions. Returns
  // whether a frame was taken.
  Result<bool> take_arrived(Frame& frame);
  // Peer i's region is expected and not yet written whole.
  bool receiving(size_t i) const { return incoming_[i].reader.has_value() && !incoming_[i].reader->done(); }
  bool all_written() const { return written_ == incoming_.size(); }

 private:
  enum class SendStage { kPart, kRegion, kNone };
  struct Outgoing {
    SendStage stage = SendStage::kPart;
    SparseVector part_scratch;  // the peer's part, when it goes as pairs
  };
  struct Incoming {
    Slice region;
    std::optional<ChunkReader> reader;  // from expect() on
    bool zeroed = false;                // the region is cleared for sparse chunks
  };
  void write(Incoming& r, const Chunk& c);

  MeshLanes* lanes_ = nullptr;
  TensorView out_;
  size_t elem_size_ = 4;
  uint64_t seq_ = 0;
  Plan plan_;
  std::vector<Outgoing> sends_;  // the send lane's
  // The receive lane's.
  std::vector<Incoming> incoming_;
  size_t written_ = 0;
  SparseVector result_scratch_;
  // Set by the receive lane before published_, read by the send lane after.
  VectorView result_;
  std::atomic<bool> published_{false};
};

}  // namespace omnib
