#include "baselines/common/owner_exchange.h"

#include <cstring>

#include "engine/trace/trace.h"

namespace omnib {

void OwnerExchange::start(MeshLanes& lanes, const TensorView& out, uint64_t seq, Plan plan) {
  lanes_ = &lanes;
  out_ = out;
  elem_size_ = dtype_size(out.dtype);
  seq_ = seq;
  plan_ = std::move(plan);
  sends_.resize(lanes.size());  // keeps each peer's scratch from call to call
  for (Outgoing& s : sends_) s.stage = SendStage::kPart;
  incoming_.assign(lanes.size(), Incoming{});
  written_ = 0;
  published_ = false;
}

MeshLanes::Protocol::Next OwnerExchange::start_stream(size_t i, StreamPoster& poster, LaneStep& step) {
  Outgoing& s = sends_[i];
  switch (s.stage) {
    case SendStage::kPart: {
      // Reads the input only in the peer's region; nothing writes there
      // until the peer has everything this lane sends.
      const int peer = lanes_->peer(i);
      trace::Span extract("extract", trace::Kind::kCompute, {.peer = peer});
      poster.start(plan_.part_tag, seq_, plan_.part_of(plan_.region_of(peer), s.part_scratch));
      s.stage = SendStage::kRegion;
      return MeshLanes::Protocol::Next::kStarted;
    }
    case SendStage::kRegion:
      if (!published_) {
        step.waiting_for = "wait result";
        return MeshLanes::Protocol::Next::kWaiting;
      }
      poster.start(plan_.region_tag, seq_, result_);
      s.stage = SendStage::kNone;
      return MeshLanes::Protocol::Next::kStarted;
    case SendStage::kNone:
      break;
  }
  return MeshLanes::Protocol::Next::kNone;
}

void OwnerExchange::publish() {
  trace::Span extract("extract result", trace::Kind::kCompute);
  const Slice mine = plan_.region_of(plan_.rank);
  result_ = extract_smaller(out_.data, mine.begin, mine.end(), elem_size_, result_scratch_);
  published_ = true;
  lanes_->send_waker().notify();
}

void OwnerExchange::expect(size_t i) {
  Incoming& r = incoming_[i];
  r.region = plan_.region_of(lanes_->peer(i));
  r.reader.emplace(r.region.begin, r.region.end(), elem_size_, plan_.region_tag, seq_, lanes_->peer(i), plan_.what);
}

Result<bool> OwnerExchange::take_arrived(Frame& frame) {
  bool moved = false;
  for (size_t i = 0; i < incoming_.size(); ++i) {
    Incoming& r = incoming_[i];
    if (!receiving(i)) continue;
    auto took = omnib::take_arrived(lanes_->link(i), *r.reader, frame, [&](const Chunk& c) { write(r, c); });
    if (!took.is_ok()) return took.status();
    moved |= took.value();
    if (r.reader->done()) ++written_;
  }
  return moved;
}

void OwnerExchange::write(Incoming& r, const Chunk& c) {
  auto* out = out_.as<uint8_t>();
  if (c.dense) {
    std::memcpy(out + c.first * elem_size_, c.values, c.items * elem_size_);
    return;
  }
  if (!r.zeroed) std::memset(out + r.region.begin * elem_size_, 0, r.region.length * elem_size_);
  r.zeroed = true;
  add_view_into(out_.dtype, c.view(), out_.data);
}

}  // namespace omnib
