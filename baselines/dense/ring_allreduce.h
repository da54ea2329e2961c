// Dense ring allreduce over our own TCP transport: a reduce-scatter then an
// allgather around the ring i -> i+1 mod n. Same transport as the engine, so
// comparing the two isolates the algorithm. See docs/algorithms.md.
//
// Each step is pipelined in frames of about 256 KiB: a sender lane forwards
// frame f of step g as soon as the receiver lane has reduced frame f of step
// g-1, so sending and receiving overlap instead of stop-and-wait.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "baselines/common/peer_links.h"
#include "engine/collective/collective.h"
#include "engine/lanes/lane_group.h"
#include "engine/transport/frame_format.h"

namespace omnib {

class RingAllreduce final : public Collective {
 public:
  static constexpr size_t kFrameBytes = wire::kStreamFrameBytes;

  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup);
  ~RingAllreduce() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override { return links_.wire_counters(); }

  static WireCost analytic_cost(const CostInputs& c);

 private:
  RingAllreduce(const CollectiveSetup& setup, PeerLinks links);

  size_t frames_of(size_t elements) const { return (elements + frame_elems_ - 1) / frame_elems_; }
  Status send_steps();
  Status receive_steps();
  // Blocks until the receiver lane has finished `frames` frames in total.
  Status wait_received(uint64_t frames);
  void abort();

  JobLayout job_;
  DType dtype_;
  size_t elem_size_;
  size_t frame_elems_;
  std::chrono::milliseconds timeout_;
  PeerLinks links_;
  std::unique_ptr<LaneGroup> lanes_;

  // Per-collective state, set before the lanes start.
  uint64_t seq_ = 0;
  TensorView in_;
  TensorView out_;

  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t frames_done_ = 0;  // frames the receiver lane has reduced or copied
  bool aborted_ = false;
};

}  // namespace omnib
