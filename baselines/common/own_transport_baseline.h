// The skeleton of every baseline that runs on our own links (ring, tree,
// sparcml-recdbl, sparcml-split, allgather, oktopk), as gloo::Algorithm is
// of Gloo's algorithms: it owns what they all have, so that an algorithm's
// file holds only its algorithm.
//   - Registration (own_transport_baseline<A>, from a descriptor as
//     nccl-tests' testColl is): always available, since they need nothing
//     but our links; creating one establishes the link sets it names.
//   - The calls settled without the network: a dedicated aggregator holds
//     no tensor; counts that differ, or too many elements for the 32-bit
//     indices a sparse algorithm sends, are usage errors; with one worker or
//     no element, out = in.
//   - The links and the lanes (a LaneGroup, or MeshLanes for the
//     algorithms that talk to every other worker), and their teardown:
//     abort every link and wake every waiting lane, join the lanes, then
//     close the links.
//   - The call: its sequence number and tensors, read by the lanes.
//   - Abort: a failed call aborts every link, so that the peers that wait
//     on this rank fail too instead of waiting out their timeout.
// An algorithm implements exchange(): its part of a call that must cross
// the network.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baselines/common/lane_signal.h"
#include "baselines/common/mesh_lanes.h"
#include "baselines/common/peer_links.h"
#include "engine/collective/collective.h"
#include "engine/lanes/lane_group.h"

namespace omnib {

class OwnTransportBaseline : public Collective {
 public:
  ~OwnTransportBaseline() override;
  OwnTransportBaseline(const OwnTransportBaseline&) = delete;
  OwnTransportBaseline& operator=(const OwnTransportBaseline&) = delete;

  // Settles the call locally where it can (see above); else starts the
  // next call with `in` and `out` and runs exchange().
  Status allreduce(const TensorView& in, const TensorView& out) final;
  // Every link set's bytes, summed.
  std::optional<ByteCounters> wire_counters() const final;

 protected:
  // Whether the algorithm sends element indices (as uint32).
  enum class Indices { kNone, kUint32 };

  // `links`: the sets the descriptor's link_plans named, in that order.
  // `lanes`: the LaneGroup run_lanes() runs (made only on workers of a job
  // of more than one; 0 for none).
  OwnTransportBaseline(const CollectiveSetup& setup, std::vector<PeerLinks> links, int lanes, Indices indices);

  // The algorithm's part of one call: a worker, more than one, at least one
  // element; seq(), in() and out() are the call's.
  virtual Status exchange() = 0;

  // Runs body(lane) on every lane of the LaneGroup; the first lane that
  // fails aborts the call (every link, every wait on signal()).
  Status run_lanes(const std::function<Status(int lane)>& body);
  // For the algorithms that exchange with every other worker: two lanes
  // over link set 0 that `protocol` drives. Call from the constructor's
  // body, once the protocol (the algorithm itself) is built.
  void start_mesh_lanes(MeshLanes::Protocol& protocol);
  MeshLanes& mesh_lanes() const { return *mesh_; }

  PeerLinks& links(size_t set = 0) { return links_[set]; }
  LaneSignal& signal() { return signal_; }
  uint64_t seq() const { return seq_; }
  const TensorView& in() const { return in_; }
  const TensorView& out() const { return out_; }

  // Fixed for the object's life.
  const JobLayout job_;
  const DType dtype_;
  const size_t elem_size_;
  const std::chrono::milliseconds timeout_;

 private:
  std::optional<Status> settled_locally(const TensorView& in, const TensorView& out) const;
  void abort();

  const Indices indices_;
  std::vector<PeerLinks> links_;
  LaneSignal signal_;
  uint64_t seq_ = 0;
  TensorView in_;
  TensorView out_;
  // Last: stopped before the links go (the destructor says the order).
  std::unique_ptr<LaneGroup> lanes_;
  std::unique_ptr<MeshLanes> mesh_;
};

// What registers one baseline beside the class that runs it, as nccl-tests'
// testColl describes a collective.
struct OwnTransportAlgorithm {
  std::string name;
  std::string summary;
  bool exploits_sparsity = false;
  // The link sets its class gets, in this order, for a job of `nodes`
  // workers. Every rank of the job, dedicated aggregators included (they
  // get no link), establishes the same plans in the same order.
  std::vector<PeerPairs> (*link_plans)(int nodes) = nullptr;
  // The bytes one call puts on the wire (docs/algorithms.md).
  WireCost (*analytic_cost)(const CostInputs& c) = nullptr;
};

// link_plans for an algorithm on one link set: one_link_set<ring_pairs>.
template <PeerPairs (*Pairs)(int nodes)>
std::vector<PeerPairs> one_link_set(int nodes) {
  return {Pairs(nodes)};
}

// The registry entry of `algorithm`, run by A: an OwnTransportBaseline
// constructed as A(const CollectiveSetup&, std::vector<PeerLinks> links).
template <class A>
CollectiveInfo own_transport_baseline(const OwnTransportAlgorithm& algorithm) {
  const auto plans = algorithm.link_plans;
  return CollectiveInfo{
      algorithm.name,
      algorithm.summary,
      algorithm.exploits_sparsity,
      [](const CollectiveSetup&) -> std::optional<std::string> { return std::nullopt; },
      [plans](const CollectiveSetup& setup) -> Result<std::unique_ptr<Collective>> {
        auto links = establish_link_sets(*setup.links, plans(setup.job.nodes));
        if (!links.is_ok()) return links.status();
        return std::unique_ptr<Collective>(std::make_unique<A>(setup, links.take()));
      },
      algorithm.analytic_cost,
  };
}

}  // namespace omnib
