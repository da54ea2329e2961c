#include "baselines/sparse/sparse_allgather.h"

#include <cstring>

#include "baselines/common/sparse_cost.h"
#include "baselines/common/sparse_stream.h"
#include "engine/trace/trace.h"

namespace omnib {

SparseAllgather::SparseAllgather(const CollectiveSetup& setup, std::vector<PeerLinks> links)
    : OwnTransportBaseline(setup, std::move(links), 2, Indices::kUint32) {}

int SparseAllgather::origin_of_step(int step) const {
  const int n = job_.nodes;
  return ((job_.rank - step - 1) % n + n) % n;
}

Status SparseAllgather::exchange() {
  trace::Span own("add own pairs", trace::Kind::kCompute);
  // Extract before zeroing: out may be the input itself.
  extract_pairs(in().data, elem_size_, 0, in().count, mine_);
  std::memset(out().data, 0, out().bytes());
  add_view_into(dtype_, mine_.view(), out().data);
  own.end();
  signal().update([this] { steps_.assign(static_cast<size_t>(job_.nodes - 1), StepFrames{}); });
  Status s = run_lanes([this](int lane) { return lane == 0 ? send_steps() : receive_steps(); });
  signal().update([this] { steps_.clear(); });  // forwarded frames are no longer needed
  return s;
}

// Step 0 sends this rank's pairs; step s forwards, frame by frame, the pairs
// received in step s-1.
Status SparseAllgather::send_steps() {
  const int n = job_.nodes;
  const int right = (job_.rank + 1) % n;
  Connection& link = *links().to(right);
  trace::name_thread("send");
  {
    trace::Span round("send round", trace::Kind::kPhase, {.peer = right, .step = 0});
    OMNIB_RETURN_IF_ERROR(send_vector(link, static_cast<uint32_t>(job_.rank), seq(), mine_.view()));
  }
  for (int s = 1; s < n - 1; ++s) {
    trace::Span round("send round", trace::Kind::kPhase, {.peer = right, .step = s});
    const auto origin = static_cast<uint32_t>(origin_of_step(s - 1));
    for (size_t i = 0;; ++i) {
      auto payload = frame_to_forward(s - 1, i);
      if (!payload.is_ok()) return payload.status();
      if (payload.value() == nullptr) break;
      const UninitBytes& bytes = *payload.value();
      trace::Span send("send frame", trace::Kind::kSend, {.peer = right, .step = s, .bytes = bytes.size()});
      OMNIB_RETURN_IF_ERROR(link.send_bytes(wire::FrameType::kSparse, origin, seq(), bytes.data(), bytes.size()));
    }
  }
  return Status::ok();
}

Result<const UninitBytes*> SparseAllgather::frame_to_forward(int step, size_t i) {
  trace::Span wait("wait round data", trace::Kind::kWait, {.step = step + 1});
  const UninitBytes* payload = nullptr;
  const auto ready = [&] {
    const StepFrames& frames = steps_[static_cast<size_t>(step)];
    // Deque elements stay put while it grows.
    if (frames.payloads.size() > i) payload = &frames.payloads[i];
    return payload != nullptr || frames.complete;
  };
  OMNIB_RETURN_IF_ERROR(signal().wait(ready, [&] {
    return "the pairs of rank " + std::to_string(origin_of_step(step)) +
           " did not arrive within the timeout (is a rank stuck? raise -T if it is only slow)";
  }));
  return payload;
}

// Receives the pairs of every other rank, adds them into the output and keeps
// the frames that the sender lane still has to forward.
Status SparseAllgather::receive_steps() {
  const int n = job_.nodes;
  const int left = (job_.rank + n - 1) % n;
  Connection& link = *links().to(left);
  Frame frame;
  Chunk chunk;
  trace::name_thread("receive");
  for (int s = 0; s < n - 1; ++s) {
    trace::Span round("receive round", trace::Kind::kPhase, {.peer = left, .step = s});
    const auto origin = static_cast<uint32_t>(origin_of_step(s));
    const bool forward = s < n - 2;
    ChunkReader reader(0, out().count, elem_size_, origin, seq(), left,
                       "allgather pairs of rank " + std::to_string(origin));
    while (!reader.done()) {
      trace::Span recv("recv frame", trace::Kind::kRecv, {.peer = left, .step = s});
      OMNIB_RETURN_IF_ERROR(link.recv(frame));
      recv.set_bytes(frame.payload.size());
      recv.end();
      trace::Span work("add pairs", trace::Kind::kCompute, {.step = s});
      OMNIB_RETURN_IF_ERROR(reader.next(frame, chunk));
      add_view_into(dtype_, chunk.view(), out().data);
      if (!forward) continue;
      signal().update([&] { steps_[static_cast<size_t>(s)].payloads.push_back(std::move(frame.payload)); });
      frame.payload = {};
    }
    if (forward) signal().update([&] { steps_[static_cast<size_t>(s)].complete = true; });
  }
  return Status::ok();
}

WireCost allgather_analytic_cost(const CostInputs& c) {
  const int n = c.nodes;
  if (n <= 1 || c.count == 0) return {0, 0, true};  // settled without the network
  // Every rank sends n-1 pieces as pairs: its own and n-2 forwarded, the
  // frames of each unchanged; rank r forwards every rank's but r+1's.
  if (const InputSupport* s = exact_support(c)) {
    std::vector<double> piece(static_cast<size_t>(n));
    double all = 0;
    for (int r = 0; r < n; ++r) {
      piece[static_cast<size_t>(r)] = sparse_stream_bytes(static_cast<double>(s->elements(r, 0, c.count)), c.elem_size);
      all += piece[static_cast<size_t>(r)];
    }
    std::vector<double> sent(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) sent[static_cast<size_t>(r)] = all - piece[static_cast<size_t>((r + 1) % n)];
    return wire_cost_of(sent, true);
  }
  return all_peers_cost(n, sparse_stream_bytes(c.stats.element_density * static_cast<double>(c.count), c.elem_size));
}

namespace {
const CollectiveRegistration kAllgather(own_transport_baseline<SparseAllgather>(
    {"allgather", "sparse allgather (PyTorch/Gloo, Horovod): allgather every rank's (index, value) pairs, sum locally",
     true, one_link_set<ring_pairs>, allgather_analytic_cost}));
}  // namespace

}  // namespace omnib
