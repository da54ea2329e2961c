#include "baselines/sparcml_split.h"

#include <cstring>

#include "baselines/even_partition.h"
#include "baselines/sparse_cost.h"
#include "baselines/sparse_stream.h"
#include "engine/trace/trace.h"

namespace omnib {
namespace {

constexpr uint32_t kTagReduceScatter = 1;
constexpr uint32_t kTagAllgather = 2;

std::vector<std::pair<int, int>> mesh_pairs(int n) {
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) pairs.push_back({a, b});
  return pairs;
}

}  // namespace

Result<std::unique_ptr<Collective>> SparcmlSplit::create(const CollectiveSetup& setup) {
  auto links = PeerLinks::establish(*setup.links, mesh_pairs(setup.job.nodes));
  if (!links.is_ok()) return links.status();
  return std::unique_ptr<Collective>(new SparcmlSplit(setup, links.take()));
}

SparcmlSplit::SparcmlSplit(const CollectiveSetup& setup, PeerLinks links)
    : job_(setup.job),
      dtype_(setup.dtype),
      elem_size_(dtype_size(setup.dtype)),
      timeout_(setup.timeout),
      links_(std::move(links)) {
  if (job_.is_worker())
    for (int r = 0; r < job_.nodes; ++r)
      if (r != job_.rank) peers_.push_back(r);
  piece_scratch_.resize(peers_.size());
  lanes_ = std::make_unique<LaneGroup>(static_cast<int>(2 * peers_.size()));
}

SparcmlSplit::~SparcmlSplit() {
  abort();
  lanes_.reset();
}

void SparcmlSplit::abort() {
  links_.abort_all();
  std::lock_guard lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

Status SparcmlSplit::allreduce(const TensorView& in, const TensorView& out) {
  if (!job_.is_worker()) return Status::ok();  // dedicated aggregators hold no tensor
  if (in.count != out.count) return usage_error("input and output counts differ");
  if (in.count > UINT32_MAX)
    return usage_error(std::to_string(in.count) + " elements do not fit 32-bit indices: use a smaller -e/--maxbytes");
  // This rank's own contribution to its slice starts the sum.
  const Slice mine = even_slice(in.count, job_.nodes, job_.rank);
  trace::Span own("copy own slice", trace::Kind::kCompute);
  if (out.data != in.data)
    std::memcpy(out.as<uint8_t>() + mine.begin * elem_size_, in.as<const uint8_t>() + mine.begin * elem_size_,
                mine.length * elem_size_);
  own.end();
  if (peers_.empty()) return Status::ok();
  ++seq_;
  in_ = in;
  out_ = out;
  {
    std::lock_guard lock(mu_);
    contributions_ = 0;
    chunks_summed_ = 0;
    result_ready_ = false;
  }
  const size_t p = peers_.size();
  std::function<Status(int)> body = [this, p](int lane) {
    const auto l = static_cast<size_t>(lane);
    return l < p ? send_to(l) : receive_from(l - p);
  };
  std::function<void()> on_failure = [this] { abort(); };
  return lanes_->run(body, on_failure);
}

void SparcmlSplit::contribution_done() {
  if (++contributions_ < peers_.size()) return;
  trace::Span extract("extract result", trace::Kind::kCompute);
  const Slice mine = even_slice(out_.count, job_.nodes, job_.rank);
  result_ = extract_smaller(out_.data, mine.begin, mine.end(), elem_size_, result_scratch_);
  result_ready_ = true;
  cv_.notify_all();
}

Status SparcmlSplit::wait_for_result() {
  trace::Span wait("wait result", trace::Kind::kWait);
  std::unique_lock lock(mu_);
  // The timeout bounds a wait without progress, not the whole reduction.
  while (!aborted_ && !result_ready_) {
    const uint64_t seen = chunks_summed_;
    if (!cv_.wait_for(lock, timeout_, [&] { return aborted_ || result_ready_ || chunks_summed_ != seen; }))
      return timeout_error(
          "no part of this rank's slice arrived within the timeout (is a peer stuck? raise -T "
          "if it is only slow)");
  }
  if (aborted_) return unavailable_error("aborted after another lane failed");
  return Status::ok();
}

// To one peer: its slice of this rank's tensor, then this rank's reduced slice.
Status SparcmlSplit::send_to(size_t peer_index) {
  const int peer = peers_[peer_index];
  Connection& link = *links_.to(peer);
  const Slice theirs = even_slice(in_.count, job_.nodes, peer);
  trace::name_thread("send to", peer);
  trace::Span phase("reduce-scatter send", trace::Kind::kPhase, {.peer = peer, .step = 0});
  trace::Span extract("extract", trace::Kind::kCompute, {.peer = peer});
  // Reads the input only in the peer's slice; nothing writes there until the
  // peer has everything this lane sends.
  const VectorView piece =
      extract_smaller(in_.data, theirs.begin, theirs.end(), elem_size_, piece_scratch_[peer_index]);
  extract.end();
  OMNIB_RETURN_IF_ERROR(send_vector(link, kTagReduceScatter, seq_, piece));
  phase.end();
  OMNIB_RETURN_IF_ERROR(wait_for_result());
  trace::Span allgather("allgather send", trace::Kind::kPhase, {.peer = peer, .step = 1});
  return send_vector(link, kTagAllgather, seq_, result_);
}

// From one peer: its part of this rank's slice (summed in), then the peer's
// reduced slice (written to the output).
Status SparcmlSplit::receive_from(size_t peer_index) {
  const int peer = peers_[peer_index];
  Connection& link = *links_.to(peer);
  const Slice mine = even_slice(out_.count, job_.nodes, job_.rank);
  trace::name_thread("receive from", peer);
  trace::Span phase("reduce-scatter receive", trace::Kind::kPhase, {.peer = peer, .step = 0});
  auto sum_into_mine = [&](const Chunk& c) {
    std::lock_guard lock(mu_);  // every receiver lane sums into the same slice
    add_view_into(dtype_, c.view(), out_.data);
    ++chunks_summed_;
    cv_.notify_all();
  };
  OMNIB_RETURN_IF_ERROR(receive_vector(link, kTagReduceScatter, seq_, mine.begin, mine.end(), elem_size_,
                                       "sparcml-split reduce-scatter", sum_into_mine));
  {
    std::lock_guard lock(mu_);
    contribution_done();
  }
  phase.end();
  trace::Span allgather("allgather receive", trace::Kind::kPhase, {.peer = peer, .step = 1});

  const Slice theirs = even_slice(out_.count, job_.nodes, peer);
  auto* out = out_.as<uint8_t>();
  bool first = true;
  auto write_theirs = [&](const Chunk& c) {
    // A sparse slice leaves zeros where it has no pair.
    if (first && !c.dense) std::memset(out + theirs.begin * elem_size_, 0, theirs.length * elem_size_);
    first = false;
    if (c.dense)
      std::memcpy(out + c.first * elem_size_, c.values, c.items * elem_size_);
    else
      add_view_into(dtype_, c.view(), out_.data);
  };
  return receive_vector(link, kTagAllgather, seq_, theirs.begin, theirs.end(), elem_size_, "sparcml-split allgather",
                        write_theirs);
}

WireCost SparcmlSplit::analytic_cost(const CostInputs& c) {
  const int n = c.nodes;
  if (n <= 1) return {0, 0, true};
  if (const InputSupport* s = exact_support(c)) {
    std::vector<Slice> slices;
    for (int j = 0; j < n; ++j) slices.push_back(even_slice(c.count, n, j));
    std::vector<double> sent(static_cast<size_t>(n), 0.0);
    add_owner_exchange_bytes(*s, slices, c.elem_size, sent);
    return wire_cost_of(sent, true);
  }
  const double m = static_cast<double>(c.count) / n;  // elements in one owner's slice
  const double upload = smaller_stream_bytes(c.element_density * m, m, c.elem_size);
  const double download = smaller_stream_bytes(c.union_element_density * m, m, c.elem_size);
  const double per_rank = (n - 1) * (upload + download);
  return {per_rank, n * per_rank};
}

namespace {
const CollectiveRegistration kSplit(CollectiveInfo{
    "sparcml-split",
    "SparCML split allgather: sparse reduce-scatter to slice owners, then allgather of the reduced slices",
    true,
    [](const CollectiveSetup&) -> std::optional<std::string> { return std::nullopt; },
    [](const CollectiveSetup& s) { return SparcmlSplit::create(s); },
    [](const CostInputs& c) { return SparcmlSplit::analytic_cost(c); },
});
}  // namespace

}  // namespace omnib
