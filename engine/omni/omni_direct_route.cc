// The omni engine's direct route (OmniCollective, omni_collective.h): every
// rank sums every worker's whole stream itself, in rank order like a shard,
// straight into its output; on two lanes (a send lane and this aggregation)
// or, where the host's cores are few, both on one (direct_lanes.h).
#include "engine/omni/omni_collective.h"

#include <algorithm>
#include <string>

#include "engine/link_lane.h"
#include "engine/trace/trace.h"

namespace omnib {
namespace {

constexpr const char* kDirectStall =
    "the direct route made no progress within the timeout (a worker stopped sending?)";

}  // namespace

// Direct route, on every rank: every worker's whole stream, reduced in rank
// order like a shard's and written into the output as it is reduced.
Status OmniCollective::aggregate_direct() {
  trace::name_thread("aggregate all");
  OMNIB_RETURN_IF_ERROR(begin_aggregate_direct());
  auto step = [this]() -> Result<LaneStep> {
    LaneStep s;
    s.waiting_for = "wait block";
    OMNIB_RETURN_IF_ERROR(aggregate_direct_round(s.moved));
    s.done = aggregated_;
    if (!s.done && !s.moved) OMNIB_RETURN_IF_ERROR(direct_links_health());
    return s;
  };
  return run_link_lane(aggregate_waker_, timeout_, nullptr, step, [] { return std::string(kDirectStall); });
}

// Both roles of the direct route on one thread, for a host whose cores its
// ranks' lanes would share (direct_lanes.h): sending first, since every
// peer waits on this rank's batches, summing whenever the sends cannot move.
// Every link of the call tells aggregate_waker_.
Status OmniCollective::send_and_aggregate_direct() {
  trace::name_thread("send and aggregate");
  begin_send();
  OMNIB_RETURN_IF_ERROR(begin_aggregate_direct());
  auto step = [this]() -> Result<LaneStep> {
    LaneStep s;
    s.waiting_for = "wait";
    if (send_phase_ != SendPhase::kSent) OMNIB_RETURN_IF_ERROR(send_round(s.moved));
    if (!s.moved && !aggregated_) OMNIB_RETURN_IF_ERROR(aggregate_direct_round(s.moved));
    s.done = aggregated_ && send_phase_ == SendPhase::kSent;
    if (!s.done && !s.moved && !aggregated_) OMNIB_RETURN_IF_ERROR(direct_links_health());
    return s;
  };
  auto stalled = [this] { return send_phase_ != SendPhase::kSent ? send_stall_message() : std::string(kDirectStall); };
  return run_link_lane(aggregate_waker_, timeout_, nullptr, step, stalled);
}

Status OmniCollective::begin_aggregate_direct() {
  OMNIB_RETURN_IF_ERROR(io_->begin_receive());
  direct_input_ended_.assign(static_cast<size_t>(job_.nodes), 0);
  result_slots_.resize(std::max<size_t>(result_slots_.size(), 1));
  result_slots_[0].batch.clear();
  // Out of place in host memory the sums go straight into the output (in
  // place they wait in held_ for the sends that still read the input).
  direct_sums_at_ = in_place_ ? nullptr : io_->host_output();
  direct_reduced_ = false;
  aggregated_ = false;
  return Status::ok();
}

// One pass of the direct route's aggregation: what arrived, one batch of
// sums, and the held sums the sends no longer need. Sets aggregated_ once
// every stream is summed and stored.
Status OmniCollective::aggregate_direct_round(bool& moved) {
  ResultBatch& batch = result_slots_[0].batch;
  uint8_t* const sums_at = direct_sums_at_;
  OMNIB_RETURN_IF_ERROR(take_inputs(0, direct_input_ended_, moved));
  if (!direct_reduced_) {
    trace::Span reduce("reduce", trace::Kind::kCompute);
    int waiting_on = -1;
    // Nothing is sent from here: a batch is as long as the blocks' cap.
    const auto progress = aggregator_->advance(batch, ResultLimit{cut_.per_batch}, &waiting_on, sums_at);
    reduce.set_blocks(batch.is_range() ? batch.written_to - batch.written_from : batch.indices.size());
    reduce.end();
    if (progress != ShardAggregator::Progress::kNeedInput && sums_at != nullptr) {
      direct_reduced_ = aggregator_->global_next() == kEndOfStream;
      count_direct_results(batch, sums_at);
      if (batch.is_range())
        OMNIB_RETURN_IF_ERROR(io_->stored_range_in_place(0, batch.written_from, batch.written_to));
      else
        OMNIB_RETURN_IF_ERROR(io_->stored_in_place(0, batch.indices));
      batch.clear();
      moved = true;
    } else if (progress != ShardAggregator::Progress::kNeedInput) {
      // As on the shards route, the batch made once every stream ended is the last.
      direct_reduced_ = aggregator_->global_next() == kEndOfStream;
      // Stored in order by store_ready_direct, at once unless in place
      // sends still read the blocks it would overwrite.
      held_.push_back(std::move(batch));
      if (!spare_results_.empty()) {
        batch = std::move(spare_results_.back());
        spare_results_.pop_back();
      }
      batch.clear();
      moved = true;
    }
  }
  const size_t held = held_.size();
  OMNIB_RETURN_IF_ERROR(store_ready_direct());
  moved |= held_.size() != held;
  if (direct_reduced_ && held_.empty()) {
    OMNIB_RETURN_IF_ERROR(io_->finish_receive(0));
    aggregated_ = true;
    moved = true;
  }
  return Status::ok();
}

// Before the direct route's aggregation waits: only a link it still needs
// can fail it.
Status OmniCollective::direct_links_health() {
  for (int w = 0; w < job_.nodes; ++w) {
    if (!direct_input_ended_[static_cast<size_t>(w)]) OMNIB_RETURN_IF_ERROR(from_worker(w).health());
    if (!held_.empty()) OMNIB_RETURN_IF_ERROR(to_shard(w).health());  // the sends the sums wait for
  }
  return Status::ok();
}

Status OmniCollective::store_ready_direct() {
  const uint64_t unsent_from = unsent_from_.load(std::memory_order_acquire);
  while (!held_.empty() && (held_.front().indices.empty() || held_.front().indices.back() < unsent_from)) {
    OMNIB_RETURN_IF_ERROR(store_direct(held_.front()));
    spare_results_.push_back(std::move(held_.front()));
    held_.pop_front();
  }
  return Status::ok();
}

void OmniCollective::count_direct_results(const ResultBatch& batch, const uint8_t* sums_at) {
  if (route_policy_ != RoutePolicy::kAuto) return;
  // The holders' counts estimate the sums': recounting every block of the
  // output cost this lane a pass over it.
  auto count = [this](const BatchShape& shape) {
    traffic_.results += sizeof(wire::FrameHeader) + sizeof(BatchHeader) +
                        encoded_bytes(choose_encoding(encoding_, shape, elem_size_), shape, elem_size_);
  };
  if (!batch.is_range()) return count(result_shape(batch, sums_at, true));
  for (const BatchShape& shape : batch.range_shapes) count(shape);
}

Status OmniCollective::store_direct(const ResultBatch& batch) {
  count_direct_results(batch, nullptr);
  if (batch.indices.empty()) return Status::ok();
  trace::Span scatter("scatter", trace::Kind::kCompute, {.blocks = batch.indices.size()});
  result_view_.count = static_cast<uint32_t>(batch.indices.size());
  result_view_.next = kEndOfStream;
  result_view_.encoding = BlockEncoding::kBlocks;
  result_view_.indices = batch.indices.data();
  result_view_.values = batch.values.data();
  result_view_.value_offsets.clear();
  size_t at = 0;
  for (uint64_t b : batch.indices) {
    result_view_.value_offsets.push_back(at);
    at += layout_.block_length(b) * elem_size_;
  }
  return io_->store(0, result_view_);
}

}  // namespace omnib
