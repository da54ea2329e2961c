#include "baselines/common/stream_poster.h"

#include "engine/trace/trace.h"

namespace omnib {

void StreamPoster::attach(Connection& link) {
  link_ = &link;
  last_ticket_ = link.sends_done();
  headers_.resize(link.send_window() + 1);
  streaming_ = false;
}

void StreamPoster::start(uint32_t tag, uint64_t seq, const VectorView& v) {
  v_ = v;
  tag_ = tag;
  seq_ = seq;
  pos_ = 0;
  streaming_ = true;
}

Result<bool> StreamPoster::post_more() {
  bool posted_any = false;
  while (streaming_) {
    ChunkHeader& h = headers_[(last_ticket_ + 1) % headers_.size()];
    iovec parts[3];
    size_t items = 0;
    const size_t count = stream_frame(v_, pos_, h, parts, items);
    const std::span<const iovec> frame(parts, count);
    trace::Span send("send frame", trace::Kind::kSend, {.peer = link_->peer_rank(), .step = static_cast<int32_t>(tag_)});
    send.set_bytes_of(frame);
    auto posted = link_->post(wire::FrameType::kSparse, tag_, seq_, frame);
    if (!posted.is_ok()) return posted.status();
    if (!posted.value()) {  // the window is full
      send.cancel();
      break;
    }
    last_ticket_ = *posted.value();
    pos_ += items;
    streaming_ = pos_ < v_.items();
    posted_any = true;
  }
  return posted_any;
}

}  // namespace omnib
