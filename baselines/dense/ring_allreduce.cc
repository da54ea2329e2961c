#include "baselines/dense/ring_allreduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "baselines/common/even_partition.h"
#include "baselines/common/ring_schedule.h"
#include "engine/blocks/reduce_ops.h"
#include "engine/trace/trace.h"

namespace omnib {

Result<std::unique_ptr<Collective>> RingAllreduce::create(const CollectiveSetup& setup) {
  // Every rank builds the same plan, aggregator ranks included (they get no link).
  auto links = PeerLinks::establish(*setup.links, ring_pairs(setup.job.nodes));
  if (!links.is_ok()) return links.status();
  return std::unique_ptr<Collective>(new RingAllreduce(setup, links.take()));
}

RingAllreduce::RingAllreduce(const CollectiveSetup& setup, PeerLinks links)
    : job_(setup.job),
      dtype_(setup.dtype),
      elem_size_(dtype_size(setup.dtype)),
      frame_elems_(std::max<size_t>(1, kFrameBytes / elem_size_)),
      timeout_(setup.timeout),
      links_(std::move(links)),
      lanes_(std::make_unique<LaneGroup>(job_.is_worker() && job_.nodes > 1 ? 2 : 0)) {}

RingAllreduce::~RingAllreduce() {
  abort();
  lanes_.reset();
}

void RingAllreduce::abort() {
  links_.abort_all();
  std::lock_guard lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

Status RingAllreduce::allreduce(const TensorView& in, const TensorView& out) {
  if (!job_.is_worker()) return Status::ok();  // dedicated aggregators hold no tensor
  if (in.count != out.count) return usage_error("input and output counts differ");
  if (job_.nodes == 1 || in.count == 0) {
    if (out.data != in.data) std::memcpy(out.data, in.data, in.bytes());
    return Status::ok();
  }
  ++seq_;
  in_ = in;
  out_ = out;
  {
    std::lock_guard lock(mu_);
    frames_done_ = 0;
  }
  std::function<Status(int)> body = [this](int lane) { return lane == 0 ? send_steps() : receive_steps(); };
  std::function<void()> on_failure = [this] { abort(); };
  return lanes_->run(body, on_failure);
}

Status RingAllreduce::wait_received(uint64_t frames) {
  trace::Span wait("wait step data", trace::Kind::kWait);
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout_, [&] { return aborted_ || frames_done_ >= frames; }))
    return timeout_error("the data from rank " + std::to_string((job_.rank + job_.nodes - 1) % job_.nodes) +
                         " did not arrive within the timeout (is that rank stuck? raise -T if it is only slow)");
  if (aborted_) return unavailable_error("aborted after another lane failed");
  return Status::ok();
}

// Sends every step's segment to the right neighbour. From step 1 on, the data
// is what the receiver lane produced in the previous step, frame by frame.
Status RingAllreduce::send_steps() {
  const int n = job_.nodes;
  const int right = (job_.rank + 1) % n;
  Connection& link = *links_.to(right);
  trace::name_thread("send");
  uint64_t prev_step_first_frame = 0;  // receiver's frame number where step g-1 began
  for (int g = 0; g < ring_steps(n); ++g) {
    trace::Span step("send step", trace::Kind::kPhase, {.peer = right, .step = g});
    const Slice seg = even_slice(in_.count, n, ring_send_segment(job_.rank, n, g));
    const auto* base = static_cast<const uint8_t*>(g == 0 ? in_.data : out_.data);
    const size_t frames = frames_of(seg.length);
    for (size_t f = 0; f < frames; ++f) {
      if (g > 0) OMNIB_RETURN_IF_ERROR(wait_received(prev_step_first_frame + f + 1));
      const size_t first = seg.begin + f * frame_elems_;
      const size_t len = std::min(frame_elems_, seg.end() - first);
      trace::Span send("send frame", trace::Kind::kSend, {.peer = right, .step = g, .bytes = len * elem_size_});
      OMNIB_RETURN_IF_ERROR(link.send_bytes(wire::FrameType::kDense, static_cast<uint32_t>(g), seq_,
                                            base + first * elem_size_, len * elem_size_));
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
  Connection& link = *links_.to(left);
  const auto* in = static_cast<const uint8_t*>(in_.data);
  auto* out = static_cast<uint8_t*>(out_.data);
  Frame frame;
  trace::name_thread("receive");
  for (int g = 0; g < ring_steps(n); ++g) {
    trace::Span step("receive step", trace::Kind::kPhase, {.peer = left, .step = g});
    const Slice seg = even_slice(in_.count, n, ring_recv_segment(job_.rank, n, g));
    const bool reduce = ring_step_reduces(n, g);
    const size_t frames = frames_of(seg.length);
    for (size_t f = 0; f < frames; ++f) {
      const size_t first = seg.begin + f * frame_elems_;
      const size_t len = std::min(frame_elems_, seg.end() - first);
      trace::Span recv("recv frame", trace::Kind::kRecv, {.peer = left, .step = g});
      OMNIB_RETURN_IF_ERROR(link.recv(frame));
      recv.set_bytes(frame.payload.size());
      recv.end();
      trace::Span work(reduce ? "reduce" : "copy", trace::Kind::kCompute, {.step = g, .bytes = len * elem_size_});
      const wire::FrameHeader& h = frame.header;
      if (frame.type() != wire::FrameType::kDense || h.seq != seq_ || h.tag != static_cast<uint32_t>(g) ||
          frame.payload.size() != len * elem_size_)
        return unavailable_error("rank " + std::to_string(left) + " sent frame type " + std::to_string(h.type) +
                                 ", collective " + std::to_string(h.seq) + ", step " + std::to_string(h.tag) + ", " +
                                 std::to_string(frame.payload.size()) + " bytes where the ring expects a dense frame " +
                                 "of collective " + std::to_string(seq_) + ", step " + std::to_string(g) + ", " +
                                 std::to_string(len * elem_size_) + " bytes (ranks out of step?)");
      uint8_t* dst = out + first * elem_size_;
      if (reduce) {
        // Out of place, the output starts as this rank's own contribution.
        if (out != in) std::memcpy(dst, in + first * elem_size_, len * elem_size_);
        add_into(dtype_, dst, frame.payload.data(), len);
      } else {
        std::memcpy(dst, frame.payload.data(), len * elem_size_);
      }
      std::lock_guard lock(mu_);
      ++frames_done_;
      cv_.notify_all();
    }
  }
  return Status::ok();
}

WireCost RingAllreduce::analytic_cost(const CostInputs& c) {
  const int n = c.nodes;
  if (n <= 1 || c.count == 0) return {};
  const size_t frame_elems = std::max<size_t>(1, kFrameBytes / c.elem_size);
  // One step moves a segment of k elements in ceil(k / frame_elems) frames.
  auto step_bytes = [&](int segment) {
    const double k = static_cast<double>(even_slice(c.count, n, segment).length);
    return k * static_cast<double>(c.elem_size) + std::ceil(k / static_cast<double>(frame_elems)) * sizeof(wire::FrameHeader);
  };
  WireCost cost;
  for (int r = 0; r < n; ++r) {
    double sent = 0;
    for (int g = 0; g < ring_steps(n); ++g) sent += step_bytes(ring_send_segment(r, n, g));
    cost.sent_per_rank_max = std::max(cost.sent_per_rank_max, sent);
    cost.sent_total += sent;
  }
  return cost;
}

namespace {
const CollectiveRegistration kRing(CollectiveInfo{
    "ring",
    "dense ring allreduce (reduce-scatter + allgather) over our TCP transport, pipelined in 256 KiB frames",
    false,
    [](const CollectiveSetup&) -> std::optional<std::string> { return std::nullopt; },
    [](const CollectiveSetup& s) { return RingAllreduce::create(s); },
    [](const CostInputs& c) { return RingAllreduce::analytic_cost(c); },
});
}  // namespace

}  // namespace omnib
