#include "baselines/sparse/sparse_allgather.h"

#include <cstring>

#include "baselines/common/sparse_cost.h"
#include "baselines/common/sparse_stream.h"
#include "engine/trace/trace.h"

namespace omnib {

Result<std::unique_ptr<Collective>> SparseAllgather::create(const CollectiveSetup& setup) {
  auto links = PeerLinks::establish(*setup.links, ring_pairs(setup.job.nodes));
  if (!links.is_ok()) return links.status();
  return std::unique_ptr<Collective>(new SparseAllgather(setup, links.take()));
}

SparseAllgather::SparseAllgather(const CollectiveSetup& setup, PeerLinks links)
    : job_(setup.job),
      dtype_(setup.dtype),
      timeout_(setup.timeout),
      links_(std::move(links)),
      lanes_(std::make_unique<LaneGroup>(job_.is_worker() && job_.nodes > 1 ? 2 : 0)) {}

SparseAllgather::~SparseAllgather() {
  abort();
  lanes_.reset();
}

void SparseAllgather::abort() {
  links_.abort_all();
  std::lock_guard lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

int SparseAllgather::origin_of_step(int step) const {
  const int n = job_.nodes;
  return ((job_.rank - step - 1) % n + n) % n;
}

Status SparseAllgather::allreduce(const TensorView& in, const TensorView& out) {
  if (!job_.is_worker()) return Status::ok();  // dedicated aggregators hold no tensor
  if (in.count != out.count) return usage_error("input and output counts differ");
  if (in.count > UINT32_MAX)
    return usage_error(std::to_string(in.count) + " elements do not fit 32-bit indices: use a smaller -e/--maxbytes");
  ++seq_;
  out_ = out;
  trace::Span own("add own pairs", trace::Kind::kCompute);
  // Extract before zeroing: out may be the input itself.
  extract_pairs(in.data, dtype_size(in.dtype), 0, in.count, mine_);
  std::memset(out.data, 0, out.bytes());
  add_view_into(dtype_, mine_.view(), out.data);
  own.end();
  if (job_.nodes == 1) return Status::ok();
  {
    std::lock_guard lock(mu_);
    steps_.assign(static_cast<size_t>(job_.nodes - 1), StepFrames{});
  }
  std::function<Status(int)> body = [this](int lane) { return lane == 0 ? send_steps() : receive_steps(); };
  std::function<void()> on_failure = [this] { abort(); };
  Status s = lanes_->run(body, on_failure);
  std::lock_guard lock(mu_);
  steps_.clear();  // forwarded frames are no longer needed
  return s;
}

// Step 0 sends this rank's pairs; step s forwards, frame by frame, the pairs
// received in step s-1.
Status SparseAllgather::send_steps() {
  const int n = job_.nodes;
  const int right = (job_.rank + 1) % n;
  Connection& link = *links_.to(right);
  trace::name_thread("send");
  {
    trace::Span round("send round", trace::Kind::kPhase, {.peer = right, .step = 0});
    OMNIB_RETURN_IF_ERROR(send_vector(link, static_cast<uint32_t>(job_.rank), seq_, mine_.view()));
  }
  for (int s = 1; s < n - 1; ++s) {
    trace::Span round("send round", trace::Kind::kPhase, {.peer = right, .step = s});
    const auto origin = static_cast<uint32_t>(origin_of_step(s - 1));
    for (size_t i = 0;; ++i) {
      const UninitBytes* payload = nullptr;
      {
        trace::Span wait("wait round data", trace::Kind::kWait, {.step = s});
        std::unique_lock lock(mu_);
        StepFrames& step = steps_[static_cast<size_t>(s - 1)];
        if (!cv_.wait_for(lock, timeout_, [&] { return aborted_ || step.payloads.size() > i || step.complete; }))
          return timeout_error("the pairs of rank " + std::to_string(origin) +
                               " did not arrive within the timeout (is a rank stuck? raise -T if it is only slow)");
        if (aborted_) return unavailable_error("aborted after another lane failed");
        if (i == step.payloads.size()) break;  // complete, everything forwarded
        payload = &step.payloads[i];           // deque elements stay put while it grows
      }
      trace::Span send("send frame", trace::Kind::kSend, {.peer = right, .step = s, .bytes = payload->size()});
      OMNIB_RETURN_IF_ERROR(link.send_bytes(wire::FrameType::kSparse, origin, seq_, payload->data(), payload->size()));
    }
  }
  return Status::ok();
}

// Receives the pairs of every other rank, adds them into the output and keeps
// the frames that the sender lane still has to forward.
Status SparseAllgather::receive_steps() {
  const int n = job_.nodes;
  const int left = (job_.rank + n - 1) % n;
  Connection& link = *links_.to(left);
  Frame frame;
  Chunk chunk;
  trace::name_thread("receive");
  for (int s = 0; s < n - 1; ++s) {
    trace::Span round("receive round", trace::Kind::kPhase, {.peer = left, .step = s});
    const auto origin = static_cast<uint32_t>(origin_of_step(s));
    const bool forward = s < n - 2;
    ChunkReader reader(0, out_.count, dtype_size(dtype_), origin, seq_, left,
                       "allgather pairs of rank " + std::to_string(origin));
    while (!reader.done()) {
      trace::Span recv("recv frame", trace::Kind::kRecv, {.peer = left, .step = s});
      OMNIB_RETURN_IF_ERROR(link.recv(frame));
      recv.set_bytes(frame.payload.size());
      recv.end();
      trace::Span work("add pairs", trace::Kind::kCompute, {.step = s});
      OMNIB_RETURN_IF_ERROR(reader.next(frame, chunk));
      add_view_into(dtype_, chunk.view(), out_.data);
      if (!forward) continue;
      std::lock_guard lock(mu_);
      steps_[static_cast<size_t>(s)].payloads.push_back(std::move(frame.payload));
      frame.payload = {};
      cv_.notify_all();
    }
    if (forward) {
      std::lock_guard lock(mu_);
      steps_[static_cast<size_t>(s)].complete = true;
      cv_.notify_all();
    }
  }
  return Status::ok();
}

WireCost SparseAllgather::analytic_cost(const CostInputs& c) {
  const int n = c.nodes;
  if (n <= 1) return {0, 0, true};
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
  const double piece = sparse_stream_bytes(c.stats.element_density * static_cast<double>(c.count), c.elem_size);
  const double per_rank = (n - 1) * piece;
  return {per_rank, n * per_rank};
}

namespace {
const CollectiveRegistration kAllgather(CollectiveInfo{
    "allgather",
    "sparse allgather (PyTorch/Gloo, Horovod): allgather every rank's (index, value) pairs, sum locally",
    true,
    [](const CollectiveSetup&) -> std::optional<std::string> { return std::nullopt; },
    [](const CollectiveSetup& s) { return SparseAllgather::create(s); },
    [](const CostInputs& c) { return SparseAllgather::analytic_cost(c); },
});
}  // namespace

}  // namespace omnib
