#include "engine/omni/shard_server.h"

#include <string>

#include "engine/lanes/link_lane.h"
#include "engine/omni/result_shape.h"
#include "engine/omni/route_choice.h"
#include "engine/omni/worker_inputs.h"
#include "engine/trace/trace.h"

namespace omnib {

ShardServer::ShardServer(OmniPeers& peers, DType dtype, std::chrono::milliseconds timeout)
    : peers_(peers), timeout_(timeout), shard_(peers.my_shard()), aggregator_(peers.workers(), dtype) {}

void ShardServer::begin(const OmniCall& call, bool range_shapes) {
  aggregator_.reset(call.layout);
  aggregator_.set_range_shapes(range_shapes);
}

Status ShardServer::run(const OmniCall& call, Waker& waker) {
  trace::name_thread("aggregate shard", shard_);
  const auto workers = static_cast<size_t>(peers_.workers());
  slots_.resize(call.to_workers.send_frames + 1);
  for (auto& slot : slots_) slot.tickets.assign(workers, 0);
  input_ended_.assign(workers, 0);
  next_post_.assign(workers, 0);
  produced_ = retired_ = 0;
  finished_ = false;
  inputs_ = 0;
  auto step = [&]() -> Result<LaneStep> {
    LaneStep s;
    s.waiting_for = "wait block";
    s.wait_args = {.shard = shard_};
    OMNIB_RETURN_IF_ERROR(take_worker_batches(call, peers_, aggregator_, shard_, input_ended_, inputs_, s.moved));
    OMNIB_RETURN_IF_ERROR(reduce_into_slot(call, s.moved));
    OMNIB_RETURN_IF_ERROR(post_results(call, s.moved));
    retire_sent(s.moved);
    s.done = finished_ && retired_ == produced_;
    if (!s.done && !s.moved) OMNIB_RETURN_IF_ERROR(owed_links_health());
    return s;
  };
  auto stalled = [this] {
    return "shard " + std::to_string(shard_) +
           " made no progress within the timeout (a worker stopped sending or "
           "reading?)";
  };
  return run_link_lane(waker, timeout_, nullptr, step, stalled);
}

Status ShardServer::reduce_into_slot(const OmniCall& call, bool& moved) {
  if (finished_ || produced_ - retired_ >= slots_.size()) return Status::ok();
  ResultSlot& slot = slot_of(produced_);
  trace::Span reduce("reduce", trace::Kind::kCompute, {.shard = shard_});
  int waiting_on = -1;
  const auto progress = aggregator_.advance(
      slot.batch, ResultLimit{call.cut.result_blocks, call.cut.result_weight, call.encoding}, &waiting_on);
  reduce.set_blocks(slot.batch.indices.size());
  reduce.end();
  if (progress == ShardAggregator::Progress::kNeedInput) return Status::ok();
  // The batch that announces the end is the stream's last, even when it was
  // flushed full (then advance() reports kDone only next time).
  const uint64_t next = aggregator_.global_next();
  slot.header = BatchHeader{static_cast<uint32_t>(slot.batch.indices.size()), 0, next};
  OMNIB_RETURN_IF_ERROR(encode_result(call, slot));
  ++produced_;
  finished_ = next == kEndOfStream;
  moved = true;
  return Status::ok();
}

Status ShardServer::encode_result(const OmniCall& call, ResultSlot& slot) {
  if (call.encoding == EncodingPolicy::kBlocks || slot.batch.indices.empty()) return Status::ok();
  trace::Span pack("pack", trace::Kind::kCompute, {.blocks = slot.batch.indices.size()});
  const BatchShape shape = result_shape(call, slot.batch);
  const BlockEncoding encoding = choose_encoding(call.encoding, shape, call.elem_size);
  slot.header.encoding = static_cast<uint32_t>(encoding);
  if (encoding == BlockEncoding::kBlocks) return Status::ok();
  const iovec values{slot.batch.values.data(), slot.batch.values.size()};
  return pack_sparse(encoding, slot.batch.indices, call.layout, call.elem_size, shape.nonzeros,
                     std::span<const iovec>(&values, 1), slot.packed);
}

Status ShardServer::post_results(const OmniCall& call, bool& moved) {
  const int workers = peers_.workers();
  for (int i = 0; i < workers; ++i) {
    const int w = (shard_ + i) % workers;  // shards start on different workers
    Connection& link = peers_.from_worker(w);
    uint64_t& k = next_post_[static_cast<size_t>(w)];
    for (; k < produced_; ++k) {
      ResultSlot& slot = slot_of(k);
      const iovec values{slot.batch.values.data(), slot.batch.values.size()};
      batch_iovecs(slot.header, slot.batch.indices, std::span<const iovec>(&values, values.iov_len ? 1 : 0),
                   &slot.packed, result_iov_);
      trace::Span send("send result", trace::Kind::kSend,
                       {.peer = w, .shard = shard_, .blocks = slot.batch.indices.size()});
      send.set_bytes_of(result_iov_);
      // The last result frame tells every worker what the shard received
      // (route_choice.h).
      const uint32_t tag = slot.header.next == kEndOfStream ? traffic_tag(inputs_) : 0;
      auto posted = link.post(wire::FrameType::kResult, tag, call.seq, result_iov_);
      if (!posted.is_ok()) return posted.status();
      if (!posted.value()) {  // this worker's link is full; the others go on
        send.cancel();
        break;
      }
      slot.tickets[static_cast<size_t>(w)] = *posted.value();
      moved = true;
    }
  }
  return Status::ok();
}

void ShardServer::retire_sent(bool& moved) {
  for (; retired_ < produced_; ++retired_) {
    ResultSlot& slot = slot_of(retired_);
    for (int w = 0; w < peers_.workers(); ++w)
      if (next_post_[static_cast<size_t>(w)] <= retired_ ||
          peers_.from_worker(w).sends_done() < slot.tickets[static_cast<size_t>(w)])
        return;
    slot.batch.clear();
    moved = true;
  }
}

Status ShardServer::owed_links_health() const {
  for (int w = 0; w < peers_.workers(); ++w) {
    const auto at = static_cast<size_t>(w);
    Connection& link = peers_.from_worker(w);
    const Status health = link.health();
    const uint64_t posted = next_post_[at];
    const bool owed = !input_ended_[at] || !finished_ || posted < produced_ ||
                      (posted > 0 && link.sends_done() < slots_[(posted - 1) % slots_.size()].tickets[at]);
    if (owed) OMNIB_RETURN_IF_ERROR(health);
  }
  return Status::ok();
}

}  // namespace omnib
