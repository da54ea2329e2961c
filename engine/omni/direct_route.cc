#include "engine/omni/direct_route.h"

#include <string>

#include "engine/lanes/link_lane.h"
#include "engine/omni/result_shape.h"
#include "engine/omni/worker_inputs.h"
#include "engine/trace/trace.h"

namespace omnib {
namespace {

constexpr const char* kDirectStall =
    "the direct route made no progress within "
    "the timeout (a worker stopped sending?)";

}  // namespace

DirectRoute::DirectRoute(OmniPeers& peers, WorkerBlockIo& io, ShardAggregator& aggregator, WorkerSender& sender,
                         std::chrono::milliseconds timeout)
    : peers_(peers), io_(io), aggregator_(aggregator), sender_(sender), timeout_(timeout) {}

Status DirectRoute::run(const OmniCall& call, Waker& waker, bool count_traffic) {
  trace::name_thread("aggregate all");
  OMNIB_RETURN_IF_ERROR(begin(call, count_traffic));
  auto step = [this]() -> Result<LaneStep> {
    LaneStep s;
    s.waiting_for = "wait block";
    OMNIB_RETURN_IF_ERROR(round(s.moved));
    s.done = aggregated_;
    if (!s.done && !s.moved) OMNIB_RETURN_IF_ERROR(links_health());
    return s;
  };
  return run_link_lane(waker, timeout_, nullptr, step, [] { return std::string(kDirectStall); });
}

Status DirectRoute::run_with_sends(const OmniCall& call, Waker& waker, bool count_traffic) {
  trace::name_thread("send and aggregate");
  OMNIB_RETURN_IF_ERROR(begin(call, count_traffic));
  auto step = [this]() -> Result<LaneStep> {
    LaneStep s;
    s.waiting_for = "wait";
    if (!sender_.sent()) OMNIB_RETURN_IF_ERROR(sender_.round(s.moved));
    if (!s.moved && !aggregated_) OMNIB_RETURN_IF_ERROR(round(s.moved));
    s.done = aggregated_ && sender_.sent();
    if (!s.done && !s.moved && !aggregated_) OMNIB_RETURN_IF_ERROR(links_health());
    return s;
  };
  auto stalled = [this] { return !sender_.sent() ? sender_.stall_message() : std::string(kDirectStall); };
  return run_link_lane(waker, timeout_, nullptr, step, stalled);
}

Status DirectRoute::begin(const OmniCall& call, bool count_traffic) {
  call_ = &call;
  count_traffic_ = count_traffic;
  traffic_ = RouteTraffic{};
  OMNIB_RETURN_IF_ERROR(io_.begin_receive());
  input_ended_.assign(static_cast<size_t>(peers_.workers()), 0);
  batch_.clear();
  // Out of place in host memory the sums go straight into the output (in
  // place they wait in held_ for the sends that still read the input).
  sums_at_ = call.in_place ? nullptr : io_.host_output();
  reduced_ = false;
  aggregated_ = false;
  return Status::ok();
}

Status DirectRoute::round(bool& moved) {
  OMNIB_RETURN_IF_ERROR(take_worker_batches(*call_, peers_, aggregator_, 0, input_ended_, traffic_.inputs, moved));
  if (!reduced_) OMNIB_RETURN_IF_ERROR(reduce(moved));
  const size_t held = held_.size();
  OMNIB_RETURN_IF_ERROR(store_ready());
  moved |= held_.size() != held;
  if (reduced_ && held_.empty()) {
    OMNIB_RETURN_IF_ERROR(io_.finish_receive(0));
    aggregated_ = true;
    moved = true;
  }
  return Status::ok();
}

Status DirectRoute::reduce(bool& moved) {
  trace::Span span("reduce", trace::Kind::kCompute);
  int waiting_on = -1;
  // Nothing is sent from here: a batch is as long as the blocks' cap.
  const auto progress = aggregator_.advance(batch_, ResultLimit{call_->cut.per_batch}, &waiting_on, sums_at_);
  span.set_blocks(batch_.is_range() ? batch_.written_to - batch_.written_from : batch_.indices.size());
  span.end();
  if (progress == ShardAggregator::Progress::kNeedInput) return Status::ok();
  // As on the shards route, the batch made once every stream ended is the last.
  reduced_ = aggregator_.global_next() == kEndOfStream;
  moved = true;
  if (sums_at_ != nullptr) {
    count_results(batch_, sums_at_);
    if (batch_.is_range())
      OMNIB_RETURN_IF_ERROR(io_.stored_range_in_place(0, batch_.written_from, batch_.written_to));
    else
      OMNIB_RETURN_IF_ERROR(io_.stored_in_place(0, batch_.indices));
    batch_.clear();
    return Status::ok();
  }
  // Stored in order by store_ready, at once unless in place sends still
  // read the blocks it would overwrite.
  held_.push_back(std::move(batch_));
  if (!spare_results_.empty()) {
    batch_ = std::move(spare_results_.back());
    spare_results_.pop_back();
  }
  batch_.clear();
  return Status::ok();
}

Status DirectRoute::store_ready() {
  const uint64_t unsent_from = sender_.unsent_from();
  while (!held_.empty() && (held_.front().indices.empty() || held_.front().indices.back() < unsent_from)) {
    OMNIB_RETURN_IF_ERROR(store(held_.front()));
    spare_results_.push_back(std::move(held_.front()));
    held_.pop_front();
  }
  return Status::ok();
}

Status DirectRoute::store(const ResultBatch& batch) {
  count_results(batch, nullptr);
  if (batch.indices.empty()) return Status::ok();
  trace::Span scatter("scatter", trace::Kind::kCompute, {.blocks = batch.indices.size()});
  view_.count = static_cast<uint32_t>(batch.indices.size());
  view_.next = kEndOfStream;
  view_.encoding = BlockEncoding::kBlocks;
  view_.indices = batch.indices.data();
  view_.values = batch.values.data();
  view_.value_offsets.clear();
  size_t at = 0;
  for (uint64_t b : batch.indices) {
    view_.value_offsets.push_back(at);
    at += call_->layout.block_length(b) * call_->elem_size;
  }
  return io_.store(0, view_);
}

void DirectRoute::count_results(const ResultBatch& batch, const uint8_t* sums_at) {
  if (!count_traffic_) return;
  // The holders' counts estimate the sums': recounting every block of the
  // output cost this lane a pass over it.
  auto count = [this](const BatchShape& shape) {
    traffic_.results +=
        sizeof(wire::FrameHeader) + sizeof(BatchHeader) +
        encoded_bytes(choose_encoding(call_->encoding, shape, call_->elem_size), shape, call_->elem_size);
  };
  if (!batch.is_range()) return count(result_shape(*call_, batch, sums_at, true));
  for (const BatchShape& shape : batch.range_shapes) count(shape);
}

Status DirectRoute::links_health() const {
  for (int w = 0; w < peers_.workers(); ++w) {
    if (!input_ended_[static_cast<size_t>(w)]) OMNIB_RETURN_IF_ERROR(peers_.from_worker(w).health());
    if (!held_.empty()) OMNIB_RETURN_IF_ERROR(peers_.to_shard(w).health());  // the sends the sums wait for
  }
  return Status::ok();
}

}  // namespace omnib
