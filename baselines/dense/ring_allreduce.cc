#include "baselines/dense/ring_allreduce.h"

#include <algorithm>
#include <cstring>

#include "baselines/common/ring_schedule.h"
#include "engine/blocks/reduce_ops.h"
#include "engine/trace/trace.h"

namespace omnib {

RingAllreduce::RingAllreduce(const CollectiveSetup& setup, std::vector<PeerLinks> links)
    : OwnTransportBaseline(setup, std::move(links), 2, Indices::kNone), frames_(elem_size_) {}

Status RingAllreduce::exchange() {
  signal().update([this] { frames_done_ = 0; });
  return run_lanes([this](int lane) { return lane == 0 ? send_steps() : receive_steps(); });
}

Status RingAllreduce::wait_received(uint64_t frames) {
  trace::Span wait("wait step data", trace::Kind::kWait);
  return signal().wait([&] { return frames_done_ >= frames; },
                       [this] {
                         return "the data from rank " + std::to_string((job_.rank + job_.nodes - 1) % job_.nodes) +
                                " did not arrive within the timeout (is that rank stuck? raise -T if it is only slow)";
                       });
}

// Sends every step's segment to the right neighbour. From step 1 on, the data
// is what the receiver lane produced in the previous step, frame by frame.
Status RingAllreduce::send_steps() {
  const int n = job_.nodes;
  const int right = (job_.rank + 1) % n;
  Connection& link = *links().to(right);
  trace::name_thread("send");
  uint64_t prev_step_first_frame = 0;  // receiver's frame number where step g-1 began
  for (int g = 0; g < ring_steps(n); ++g) {
    trace::Span step("send step", trace::Kind::kPhase, {.peer = right, .step = g});
    const Slice seg = even_slice(in().count, n, ring_send_segment(job_.rank, n, g));
    const auto* base = static_cast<const uint8_t*>(g == 0 ? in().data : out().data);
    const size_t frames = frames_.count(seg.length);
    for (size_t f = 0; f < frames; ++f) {
      if (g > 0) OMNIB_RETURN_IF_ERROR(wait_received(prev_step_first_frame + f + 1));
      const DenseFrames::Span span = frames_.frame(seg, f);
      trace::Span send("send frame", trace::Kind::kSend, {.peer = right, .step = g, .bytes = span.bytes});
      OMNIB_RETURN_IF_ERROR(
          link.send_bytes(wire::FrameType::kDense, static_cast<uint32_t>(g), seq(), base + span.offset, span.bytes));
    }
    // The segment sent in step g is the one received in step g-1: same frame count.
    if (g > 0) prev_step_first_frame += frames;
  }
  return Status::ok();
}

// Receives every step's segment from the left neighbour: summed into the
// output during the reduce-scatter, copied during the allgather.
Status RingAllreduce::receive_steps() {
  const int n = job_.nodes;
  const int left = (job_.rank + n - 1) % n;
  Connection& link = *links().to(left);
  const auto* own = static_cast<const uint8_t*>(in().data);
  auto* result = static_cast<uint8_t*>(out().data);
  Frame frame;
  trace::name_thread("receive");
  for (int g = 0; g < ring_steps(n); ++g) {
    trace::Span step("receive step", trace::Kind::kPhase, {.peer = left, .step = g});
    const Slice seg = even_slice(in().count, n, ring_recv_segment(job_.rank, n, g));
    const bool reduce = ring_step_reduces(n, g);
    for (size_t f = 0; f < frames_.count(seg.length); ++f) {
      const DenseFrames::Span span = frames_.frame(seg, f);
      trace::Span recv("recv frame", trace::Kind::kRecv, {.peer = left, .step = g});
      OMNIB_RETURN_IF_ERROR(link.recv(frame));
      recv.set_bytes(frame.payload.size());
      recv.end();
      trace::Span work(reduce ? "reduce" : "copy", trace::Kind::kCompute, {.step = g, .bytes = span.bytes});
      OMNIB_RETURN_IF_ERROR(
          check_dense_frame(frame, left, seq(), static_cast<uint32_t>(g), span.bytes, "the ring", "step"));
      uint8_t* dst = result + span.offset;
      if (reduce) {
        // Out of place, the output starts as this rank's own contribution.
        if (result != own) std::memcpy(dst, own + span.offset, span.bytes);
        add_into(dtype_, dst, frame.payload.data(), span.elements);
      } else {
        std::memcpy(dst, frame.payload.data(), span.bytes);
      }
      signal().update([this] { ++frames_done_; });
    }
  }
  return Status::ok();
}

WireCost ring_analytic_cost(const CostInputs& c) {
  const int n = c.nodes;
  if (n <= 1 || c.count == 0) return {};
  const DenseFrames frames(c.elem_size);
  WireCost cost;
  for (int r = 0; r < n; ++r) {
    double sent = 0;
    for (int g = 0; g < ring_steps(n); ++g)
      sent += frames.wire_bytes(static_cast<double>(even_slice(c.count, n, ring_send_segment(r, n, g)).length));
    cost.sent_per_rank_max = std::max(cost.sent_per_rank_max, sent);
    cost.sent_total += sent;
  }
  return cost;
}

namespace {
const CollectiveRegistration kRing(own_transport_baseline<RingAllreduce>(
    {"ring", "dense ring allreduce (reduce-scatter + allgather) over our TCP transport, pipelined in 256 KiB frames",
     false, one_link_set<ring_pairs>, ring_analytic_cost}));
}  // namespace

}  // namespace omnib
