#include "engine/omni/worker_inputs.h"

#include <string>

#include "engine/trace/trace.h"

namespace omnib {

Status expect_omni_frame(const Frame& f, wire::FrameType type, uint64_t seq, int peer) {
  if (f.type() != type)
    return unavailable_error("rank " + std::to_string(peer) + " sent frame type " + std::to_string(f.header.type) +
                             " where the omni protocol expects " + std::to_string(static_cast<int>(type)));
  if (f.header.seq != seq)
    return unavailable_error("rank " + std::to_string(peer) + " is on collective " + std::to_string(f.header.seq) +
                             ", this rank on " + std::to_string(seq) + " (ranks out of step)");
  return Status::ok();
}

Status take_worker_batches(const OmniCall& call, const OmniPeers& peers, ShardAggregator& aggregator, int stream,
                           std::vector<char>& input_ended, uint64_t& bytes, bool& moved) {
  const size_t pull = call.to_shards.recv_frames;
  for (int w = 0; w < peers.workers(); ++w) {
    Connection& link = peers.from_worker(w);
    while (!input_ended[static_cast<size_t>(w)] && aggregator.queued(w) < pull) {
      Frame frame = aggregator.take_spare_frame();
      auto got = link.try_recv(frame);
      if (!got.is_ok()) return got.status();
      if (!got.value()) {
        aggregator.give_spare_frame(std::move(frame));
        break;
      }
      moved = true;
      const int64_t arrived = trace::now_ns();  // a point: the frame is whole
      trace::record("recv batch", trace::Kind::kRecv, arrived, arrived,
                    {.peer = w, .shard = peers.my_shard(), .bytes = frame.payload.size()});
      OMNIB_RETURN_IF_ERROR(expect_omni_frame(frame, wire::FrameType::kBlocks, call.seq, w));
      if (frame.header.tag != call.blocks_tag())
        return unavailable_error("rank " + std::to_string(w) + " sent its blocks on the " +
                                 (call.direct ? "shards" : "direct") + " route, this rank takes the " +
                                 (call.direct ? "direct" : "shards") + " route (ranks disagree on the route)");
      bytes += sizeof(wire::FrameHeader) + frame.payload.size();
      BatchView view = aggregator.take_spare_view();
      OMNIB_RETURN_IF_ERROR(decode_batch(frame.payload, call.layout, call.elem_size, call.map, stream, view));
      input_ended[static_cast<size_t>(w)] = view.next == kEndOfStream;
      OMNIB_RETURN_IF_ERROR(aggregator.push(w, std::move(frame), std::move(view)));
    }
  }
  return Status::ok();
}

}  // namespace omnib
