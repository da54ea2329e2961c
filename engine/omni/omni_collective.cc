#include "engine/omni/omni_collective.h"

#include <array>
#include <cstdlib>

#include "engine/omni/device_block_io.h"
#include "engine/omni/direct_lanes.h"
#include "engine/omni/host_block_io.h"
#include "engine/omni/omni_cost.h"
#include "engine/trace/trace.h"

namespace omnib {
namespace {

Result<std::unique_ptr<WorkerBlockIo>> make_block_io(const CollectiveSetup& setup, int shards) {
  WorkerBlockIoFactory factory = HostBlockIo::create;
  if (setup.device == DeviceKind::kCuda) {
    factory = device_block_io_factory();
    if (factory == nullptr)
      return unavailable_error(
          "omni: this build has no CUDA kernels for "
          "device tensors (configure with CUDA)");
  }
  auto made = factory(shards);
  if (!made.is_ok()) return made.status().with_context("omni: ");
  return made.take();
}

}  // namespace

Result<std::unique_ptr<Collective>> OmniCollective::create(const CollectiveSetup& setup, OmniOptions options) {
  const JobLayout& job = setup.job;
  std::unique_ptr<WorkerBlockIo> io;
  if (job.is_worker()) {
    auto made = make_block_io(setup, job.aggregators > 0 ? job.aggregators : job.nodes);
    if (!made.is_ok()) return made.status();
    io = made.take();
  }
  if (setup.omni.route == RoutePolicy::kDirect && (job.aggregators > 0 || job.nodes < 2))
    return usage_error(
        "omni: --route direct needs two or more workers and no "
        "dedicated aggregators (use --route auto or shards)");
  auto direct_lanes = direct_route_lanes(std::getenv(kDirectLanesVar), setup.local_workers, usable_cores());
  if (!direct_lanes.is_ok()) return direct_lanes.status().with_context("omni: ");
  auto links = setup.links->establish(OmniPeers::link_specs(job));
  if (!links.is_ok()) return links.status().with_context("omni: ");
  return std::unique_ptr<Collective>(
      new OmniCollective(setup, options, direct_lanes.value() == 1, links.take(), std::move(io)));
}

OmniCollective::OmniCollective(const CollectiveSetup& setup, OmniOptions options, bool direct_on_one_lane,
                               LinkSet links, std::unique_ptr<WorkerBlockIo> io)
    : settings_(setup.omni),
      timeout_(setup.timeout),
      direct_on_one_lane_(direct_on_one_lane),
      route_policy_(options.dense ? RoutePolicy::kShards : settings_.route),
      peers_(setup.job, std::move(links)),
      io_(std::move(io)) {
  call_.elem_size = dtype_size(setup.dtype);
  call_.encoding = options.dense ? EncodingPolicy::kBlocks : settings_.encoding;
  call_.dense = options.dense;
  int lanes = 0;
  if (peers_.job().is_worker()) {
    lanes += 2;
    sender_ = std::make_unique<WorkerSender>(peers_, *io_, aggregate_waker_, timeout_);
    receiver_ = std::make_unique<WorkerReceiver>(peers_, *io_, timeout_);
    for (int s = 0; s < peers_.shards(); ++s) peers_.to_shard(s).set_wakers(&receive_waker_, &send_waker_);
  }
  if (peers_.my_shard() >= 0) {
    lanes += 1;
    server_ = std::make_unique<ShardServer>(peers_, setup.dtype, timeout_);
    for (int w = 0; w < peers_.workers(); ++w) peers_.from_worker(w).set_wakers(&aggregate_waker_, &aggregate_waker_);
  }
  if (direct_possible())
    direct_ = std::make_unique<DirectRoute>(peers_, *io_, server_->aggregator(), *sender_, timeout_);
  lanes_ = std::make_unique<LaneGroup>(lanes);
  // Auto's first call takes the shards route: nothing is learned yet.
  if (route_policy_ == RoutePolicy::kDirect && direct_possible()) route_ = RoutePolicy::kDirect;
}

OmniCollective::~OmniCollective() {
  abort();
  lanes_.reset();
  peers_.detach_wakers();  // the links outlive this object's wakers otherwise
}

Status OmniCollective::allreduce(const TensorView& in, const TensorView& out) {
  if (in.count != out.count) return usage_error("omni: input and output counts differ");
  // A new tensor size starts afresh: its first call takes the shards route.
  if (route_policy_ == RoutePolicy::kAuto && in.count != call_.layout.count()) route_ = RoutePolicy::kShards;
  const StreamTuning to_shards = call_.to_shards, to_workers = call_.to_workers;
  call_ = plan_omni_call(call_, settings_, peers_.workers(), peers_.shards(), call_.seq + 1, in.count,
                         route_ == RoutePolicy::kDirect, in.data == out.data);
  apply_windows(to_shards, to_workers);
  if (io_) OMNIB_RETURN_IF_ERROR(io_->begin(in, out, call_.layout, call_.map));
  if (server_) server_->begin(call_,
                              route_policy_ == RoutePolicy::kAuto);  // range shapes: for the route choice alone
  if (sender_) sender_->begin(call_);
  last_route_ = route_policy_name(route_);
  const int64_t begun = trace::now_ns();  // a point: which route this call takes
  trace::record(call_.direct ? "route direct" : "route shards", trace::Kind::kCompute, begun, begun);
  // (A failure goes up as it is: the harness names the rank and algorithm.)
  OMNIB_RETURN_IF_ERROR(run_roles());
  // Every rank saw the same traffic: all pick the same route for the next call.
  route_ = next_route(route_policy_, route_, call_traffic(), peers_.workers(), direct_possible());
  return Status::ok();
}

void OmniCollective::apply_windows(const StreamTuning& to_shards_before, const StreamTuning& to_workers_before) {
  const StreamTuning& up = call_.to_shards;
  const StreamTuning& down = call_.to_workers;
  if (up == to_shards_before && down == to_workers_before) return;
  if (sender_)
    for (int s = 0; s < peers_.shards(); ++s)
      peers_.to_shard(s).set_windows(down.recv_frames, up.send_frames, down.inflight_bytes);
  if (server_)
    for (int w = 0; w < peers_.workers(); ++w)
      peers_.from_worker(w).set_windows(up.recv_frames, down.send_frames, up.inflight_bytes);
}

Status OmniCollective::run_roles() {
  const bool one_lane = call_.direct && direct_on_one_lane_;
  if (one_lane != links_wake_one_lane_) {
    // One lane waits on one Waker: the send events of this rank's worker
    // links must tell it too.
    for (int s = 0; s < peers_.shards(); ++s)
      peers_.to_shard(s).set_wakers(&receive_waker_, one_lane ? &aggregate_waker_ : &send_waker_);
    links_wake_one_lane_ = one_lane;
  }
  std::array<Role, 3> roles{};
  int count = 0;
  if (one_lane) {
    roles[count++] = Role::kDirectWithSends;
  } else if (call_.direct) {
    roles[count++] = Role::kSend;  // every rank is a worker and a shard
    roles[count++] = Role::kDirect;
  } else {
    if (sender_) {
      roles[count++] = Role::kSend;
      roles[count++] = Role::kReceive;
    }
    if (server_ && peers_.my_shard() < call_.map.shards()) roles[count++] = Role::kServe;
  }
  // A lane per role: the direct route leaves the shard's third lane asleep.
  const std::function<Status(int)> body = [&](int lane) { return run_role(roles[static_cast<size_t>(lane)]); };
  const std::function<void()> on_failure = [this] { abort(); };
  return lanes_->run(count, body, on_failure);
}

Status OmniCollective::run_role(Role role) {
  const bool count_traffic = route_policy_ == RoutePolicy::kAuto;
  switch (role) {
    case Role::kSend:
      return sender_->run(send_waker_);
    case Role::kReceive:
      return receiver_->run(call_, receive_waker_);
    case Role::kServe:
      return server_->run(call_, aggregate_waker_);
    case Role::kDirect:
      return direct_->run(call_, aggregate_waker_, count_traffic);
    case Role::kDirectWithSends:
      return direct_->run_with_sends(call_, aggregate_waker_, count_traffic);
  }
  return internal_error("omni: unknown lane role");
}

RouteTraffic OmniCollective::call_traffic() const {
  if (call_.direct) return direct_->traffic();
  return receiver_ ? receiver_->traffic() : RouteTraffic{};
}

std::optional<std::string> OmniCollective::unavailable_reason(const CollectiveSetup& setup) {
  if (setup.device == DeviceKind::kCuda && device_block_io_factory() == nullptr)
    return "this build has no CUDA kernels for device tensors";
  return std::nullopt;
}

namespace {
const CollectiveRegistration kOmni(CollectiveInfo{
    "omni",
    "block-sparse streaming aggregation (OmniReduce): only non-zero blocks "
    "cross the wire",
    true,
    OmniCollective::unavailable_reason,
    [](const CollectiveSetup& s) { return OmniCollective::create(s, OmniOptions{}); },
    [](const CostInputs& c) { return omni_analytic_cost(c, false); },
    true,
});
}  // namespace

}  // namespace omnib
