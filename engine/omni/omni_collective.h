// The OmniReduce-style block-sparse streaming allreduce.
//
// Workers stream their non-zero blocks, shard by shard, to aggregator shards;
// each shard reduces a block as soon as every worker that holds it delivered it
// and streams the sum back to all workers. Zero blocks never cross the wire.
// On the direct route (route_choice.h) every worker streams all its non-zero
// blocks to every worker instead, and every worker reduces the whole tensor in
// rank order, so all get the same bits without a result stream. See
// docs/algorithms.md for the protocol and its cost.
//
// This class creates the collective, plans each call (OmniCall), picks the
// route and the lane roles that run it, and aborts; each role is an object
// of its own: WorkerSender, WorkerReceiver, ShardServer, DirectRoute.
//
// Threads: however many ranks and shards the job has, a worker runs two lanes
// (its sender and its receiver, or its sender and the direct route's
// aggregation) and a shard runs one; the process's network thread
// (engine/transport/tcp/io_loop.h) moves the bytes. A lane that serves many links
// waits on one Waker for all of them.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/collective/collective.h"
#include "engine/lanes/lane_group.h"
#include "engine/omni/direct_route.h"
#include "engine/omni/omni_call.h"
#include "engine/omni/omni_peers.h"
#include "engine/omni/shard_server.h"
#include "engine/omni/worker_block_io.h"
#include "engine/omni/worker_receiver.h"
#include "engine/omni/worker_sender.h"

namespace omnib {

struct OmniOptions {
  bool dense = false;  // send every block (the dense parameter-server baseline)
};

class OmniCollective final : public Collective {
 public:
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup, OmniOptions options);
  ~OmniCollective() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override { return peers_.wire_counters(); }
  const char* last_route() const override { return last_route_; }

  // Device tensors need the CUDA block IO, which a build may lack.
  static std::optional<std::string> unavailable_reason(const CollectiveSetup& setup);

 private:
  // The roles a lane can play in a call.
  enum class Role { kSend, kReceive, kServe, kDirect, kDirectWithSends };

  OmniCollective(const CollectiveSetup& setup, OmniOptions options, bool direct_on_one_lane, LinkSet links,
                 std::unique_ptr<WorkerBlockIo> io);

  bool direct_possible() const { return peers_.job().aggregators == 0 && peers_.job().nodes > 1; }
  // Each end of a link sizes what it receives, when the call's tuning changed.
  void apply_windows(const StreamTuning& to_shards_before, const StreamTuning& to_workers_before);
  // Runs this call's roles, one per lane.
  Status run_roles();
  Status run_role(Role role);
  // The traffic the route choice learns from, as whichever role counted it.
  RouteTraffic call_traffic() const;
  void abort() { peers_.abort(); }  // every waiting lane wakes to the failure

  OmniSettings settings_;
  const std::chrono::milliseconds timeout_;
  // Whether the direct route runs both roles on the calling thread: when
  // this host's workers have fewer cores than two lanes each
  // (OMNIB_DIRECT_LANES=1 or 2 forces one or two; create() asks
  // direct_lanes.h).
  const bool direct_on_one_lane_;
  bool links_wake_one_lane_ = false;  // the worker links' send events tell aggregate_waker_
  RoutePolicy route_policy_;
  RoutePolicy route_ = RoutePolicy::kShards;  // the next call's route
  const char* last_route_ = nullptr;
  OmniCall call_;  // this call's plan (the fixed fields set once)

  OmniPeers peers_;
  std::unique_ptr<WorkerBlockIo> io_;  // null on dedicated aggregators
  // Told by this rank's links when a frame arrives or a send finishes.
  Waker send_waker_, receive_waker_, aggregate_waker_;
  std::unique_ptr<WorkerSender> sender_;      // workers
  std::unique_ptr<WorkerReceiver> receiver_;  // workers
  std::unique_ptr<ShardServer> server_;       // ranks that host a shard
  std::unique_ptr<DirectRoute> direct_;       // where the direct route is possible
  std::unique_ptr<LaneGroup> lanes_;
};

}  // namespace omnib
