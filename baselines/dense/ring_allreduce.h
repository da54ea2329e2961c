// Dense ring allreduce over our own transport: a reduce-scatter then an
// allgather around the ring i -> i+1 mod n. Same transport as the engine, so
// comparing the two isolates the algorithm. See docs/algorithms.md.
//
// Each step is pipelined in frames of about 256 KiB (dense_frames.h): a
// sender lane forwards frame f of step g as soon as the receiver lane has
// reduced frame f of step g-1, so sending and receiving overlap instead of
// stop-and-wait.
#pragma once

#include <vector>

#include "baselines/common/dense_frames.h"
#include "baselines/common/own_transport_baseline.h"

namespace omnib {

class RingAllreduce final : public OwnTransportBaseline {
 public:
  RingAllreduce(const CollectiveSetup& setup, std::vector<PeerLinks> links);

 private:
  Status exchange() override;
  Status send_steps();
  Status receive_steps();
  // Blocks until the receiver lane has finished `frames` frames in total.
  Status wait_received(uint64_t frames);

  DenseFrames frames_;
  uint64_t frames_done_ = 0;  // frames the receiver lane has reduced or copied; under signal()
};

// The bytes one call puts on the wire (docs/algorithms.md).
WireCost ring_analytic_cost(const CostInputs& c);

}  // namespace omnib
