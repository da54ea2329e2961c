#include "engine/omni/worker_receiver.h"

#include "engine/lanes/link_lane.h"
#include "engine/omni/worker_inputs.h"
#include "engine/trace/trace.h"

namespace omnib {

WorkerReceiver::WorkerReceiver(OmniPeers& peers, WorkerBlockIo& io, std::chrono::milliseconds timeout)
    : peers_(peers), io_(io), timeout_(timeout) {
  frames_.resize(static_cast<size_t>(peers.shards()));
}

Status WorkerReceiver::run(const OmniCall& call, Waker& waker) {
  trace::name_thread("receive from shards");
  traffic_ = RouteTraffic{};
  OMNIB_RETURN_IF_ERROR(io_.begin_receive());
  ended_.assign(static_cast<size_t>(call.map.shards()), 0);
  remaining_ = call.map.shards();
  auto step = [&]() -> Result<LaneStep> {
    LaneStep s;
    s.waiting_for = "wait result";
    for (int shard = 0; shard < call.map.shards(); ++shard)
      if (!ended_[static_cast<size_t>(shard)]) OMNIB_RETURN_IF_ERROR(take_results(call, shard, s.moved));
    s.done = remaining_ == 0;
    return s;
  };
  auto stalled = [this] {
    return "no result arrived from " + std::to_string(remaining_) +
           " shard(s) within the timeout (is an aggregator or a worker stuck?)";
  };
  return run_link_lane(waker, timeout_, nullptr, step, stalled);
}

Status WorkerReceiver::take_results(const OmniCall& call, int s, bool& moved) {
  Frame& frame = frames_[static_cast<size_t>(s)];
  Connection& link = peers_.to_shard(s);
  while (true) {
    auto got = link.try_recv(frame);
    if (!got.is_ok()) return got.status();
    if (!got.value()) return Status::ok();
    moved = true;
    const int64_t arrived = trace::now_ns();  // a point: the frame is whole
    trace::record("recv result", trace::Kind::kRecv, arrived, arrived,
                  {.peer = peers_.shard_rank(s), .shard = s, .bytes = frame.payload.size()});
    trace::Span scatter("scatter", trace::Kind::kCompute, {.shard = s});
    OMNIB_RETURN_IF_ERROR(expect_omni_frame(frame, wire::FrameType::kResult, call.seq, link.peer_rank()));
    OMNIB_RETURN_IF_ERROR(decode_batch(frame.payload, call.layout, call.elem_size, call.map, s, view_));
    traffic_.results += sizeof(wire::FrameHeader) + frame.payload.size();
    const bool last = view_.next == kEndOfStream;
    if (last) traffic_.inputs += frame.header.tag;  // what the shard's workers sent it
    scatter.set_blocks(view_.count);
    OMNIB_RETURN_IF_ERROR(io_.store(s, view_));
    if (last) {
      OMNIB_RETURN_IF_ERROR(io_.finish_receive(s));
      ended_[static_cast<size_t>(s)] = 1;
      --remaining_;
      return Status::ok();
    }
  }
}

}  // namespace omnib
