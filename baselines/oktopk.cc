#include "baselines/oktopk.h"

#include <algorithm>
#include <cstring>

#include "baselines/own_transport_baseline.h"
#include "baselines/sparse_cost.h"
#include "baselines/sparse_stream.h"

namespace omnib {
namespace {

// Stream tags: histogram counts of round r use kTagHistogram + r.
constexpr uint32_t kTagHistogram = 1;
constexpr uint32_t kTagReduce = 3;
constexpr uint32_t kTagAllgather = 4;

// Histogram counts travel as a dense stream of 4-byte elements.
constexpr size_t kCountBytes = sizeof(uint32_t);

VectorView counts_view(const std::vector<uint32_t>& counts) {
  VectorView v;
  v.end = counts.size();
  v.dense = true;
  v.elem_size = kCountBytes;
  v.values = reinterpret_cast<const uint8_t*>(counts.data());
  return v;
}

}  // namespace

Result<std::unique_ptr<Collective>> Oktopk::create(const CollectiveSetup& setup) {
  auto links = PeerLinks::establish(*setup.links, full_mesh_pairs(setup.job.nodes));
  if (!links.is_ok()) return links.status();
  return std::unique_ptr<Collective>(new Oktopk(setup, links.take()));
}

Oktopk::Oktopk(const CollectiveSetup& setup, PeerLinks links)
    : job_(setup.job),
      dtype_(setup.dtype),
      elem_size_(dtype_size(setup.dtype)),
      timeout_(setup.timeout),
      links_(std::move(links)) {
  if (job_.is_worker())
    for (int r = 0; r < job_.nodes; ++r)
      if (r != job_.rank) peers_.push_back(r);
  piece_scratch_.resize(peers_.size());
  merged_.assign(peers_.size(), false);
  // A sender and a receiver lane per peer, and the merge lane.
  lanes_ = std::make_unique<LaneGroup>(peers_.empty() ? 0 : static_cast<int>(2 * peers_.size() + 1));
}

Oktopk::~Oktopk() {
  abort();
  lanes_.reset();
}

void Oktopk::abort() {
  links_.abort_all();
  std::lock_guard lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

Status Oktopk::allreduce(const TensorView& in, const TensorView& out) {
  if (auto settled = settled_locally(job_, in, out)) return *settled;
  if (in.count > UINT32_MAX)
    return usage_error(std::to_string(in.count) + " elements do not fit 32-bit indices: use a smaller -e/--maxbytes");
  ++seq_;
  in_ = in;
  out_ = out;
  {
    std::lock_guard lock(mu_);
    split_.reset(in.count, job_.nodes);
    my_counts_[0].resize(split_.round_cells().size());
    nonzeros_.scan(in.data, in.count, elem_size_, split_.round_cells(), my_counts_[0].data());
    split_.add_counts(my_counts_[0].data());
    round_ = 0;
    counts_received_ = 0;
    split_ready_ = false;
    merged_.assign(peers_.size(), false);
    result_ready_ = false;
  }
  const size_t p = peers_.size();
  std::function<Status(int)> body = [this, p](int lane) {
    const auto l = static_cast<size_t>(lane);
    if (l < p) return send_to(l);
    if (l < 2 * p) return receive_from(l - p);
    return merge_my_region();
  };
  std::function<void()> on_failure = [this] { abort(); };
  return lanes_->run(body, on_failure);
}

Status Oktopk::wait_until(std::unique_lock<std::mutex>& lock, const std::function<bool()>& pred,
                          const std::string& what) {
  while (!aborted_ && !pred()) {
    const uint64_t seen = progress_.load();
    if (!cv_.wait_for(lock, timeout_, [&] { return aborted_ || pred(); }) && progress_.load() == seen)
      return timeout_error(what + " did not arrive within the timeout (is a peer stuck? raise -T if it is only slow)");
  }
  if (aborted_) return unavailable_error("aborted after another lane failed");
  return Status::ok();
}

void Oktopk::count_received() {
  ++progress_;
  cv_.notify_all();
  if (++counts_received_ < peers_.size()) return;
  counts_received_ = 0;
  if (!split_.finish_round()) {
    split_ready_ = true;
    return;
  }
  // A fine round: this rank counts the cells the coarse counts asked for.
  round_ = 1;
  my_counts_[1].resize(split_.round_cells().size());
  nonzeros_.count(split_.round_cells(), my_counts_[1].data());
  split_.add_counts(my_counts_[1].data());
}

// To one peer: this rank's histogram counts, its part of the peer's region,
// then this rank's reduced region.
Status Oktopk::send_to(size_t peer_index) {
  const int peer = peers_[peer_index];
  Connection& link = *links_.to(peer);
  OMNIB_RETURN_IF_ERROR(send_vector(link, kTagHistogram, seq_, counts_view(my_counts_[0])));
  Slice theirs;
  {
    std::unique_lock lock(mu_);
    OMNIB_RETURN_IF_ERROR(wait_until(lock, [&] { return split_ready_ || round_ > 0; }, "the histogram counts"));
    if (round_ > 0) {
      lock.unlock();  // my_counts_[1] is fixed once round 1 has begun
      OMNIB_RETURN_IF_ERROR(send_vector(link, kTagHistogram + 1, seq_, counts_view(my_counts_[1])));
      lock.lock();
      OMNIB_RETURN_IF_ERROR(wait_until(lock, [&] { return split_ready_; }, "the fine histogram counts"));
    }
    theirs = split_.region(peer);
  }
  // Reads the input only in the peer's region; nothing writes there until
  // the peer has everything this lane sends.
  const VectorView piece = nonzeros_.smaller(theirs, piece_scratch_[peer_index]);
  OMNIB_RETURN_IF_ERROR(send_vector(link, kTagReduce, seq_, piece));
  {
    std::unique_lock lock(mu_);
    OMNIB_RETURN_IF_ERROR(wait_until(lock, [&] { return result_ready_; }, "the parts of this rank's region"));
  }
  return send_vector(link, kTagAllgather, seq_, result_);
}

// From one peer: its histogram counts, then (after the merge lane has read
// the peer's part of this rank's region) the peer's reduced region.
Status Oktopk::receive_from(size_t peer_index) {
  const int peer = peers_[peer_index];
  Connection& link = *links_.to(peer);
  SparseVector counts;
  for (int round = 0;; ++round) {
    size_t cells = 0;
    {
      std::lock_guard lock(mu_);
      cells = split_.round_cells().size();
    }
    OMNIB_RETURN_IF_ERROR(receive_vector(link, kTagHistogram + static_cast<uint32_t>(round), seq_, 0, cells,
                                         kCountBytes, "oktopk histogram", counts));
    densify(DType::kInt32, counts);
    std::unique_lock lock(mu_);
    split_.add_counts(reinterpret_cast<const uint32_t*>(counts.values.data()));
    count_received();
    OMNIB_RETURN_IF_ERROR(wait_until(lock, [&] { return split_ready_ || round_ > round; }, "the histogram counts"));
    if (split_ready_) break;
  }
  Slice theirs;
  {
    std::unique_lock lock(mu_);
    OMNIB_RETURN_IF_ERROR(
        wait_until(lock, [&] { return merged_[peer_index]; }, "rank " + std::to_string(peer) + "'s part"));
    theirs = split_.region(peer);
  }
  auto* out = out_.as<uint8_t>();
  bool zeroed = false;
  auto write_theirs = [&](const Chunk& c) {
    ++progress_;
    if (c.dense) {
      std::memcpy(out + c.first * elem_size_, c.values, c.items * elem_size_);
      return;
    }
    // A sparse region leaves zeros where it has no pair.
    if (!zeroed) std::memset(out + theirs.begin * elem_size_, 0, theirs.length * elem_size_);
    zeroed = true;
    scatter_add(dtype_, out, 0, c.indices, c.values, c.items);
  };
  return receive_vector(link, kTagAllgather, seq_, theirs.begin, theirs.end(), elem_size_, "oktopk allgather",
                        write_theirs);
}

// Sums every peer's part of this rank's region with its own, in rank order.
Status Oktopk::merge_my_region() {
  Slice mine;
  {
    std::unique_lock lock(mu_);
    OMNIB_RETURN_IF_ERROR(wait_until(lock, [&] { return split_ready_; }, "the histogram counts"));
    mine = split_.region(job_.rank);
  }
  std::vector<RankOrderMerge::Source> sources;
  for (int peer : peers_) sources.push_back({peer, links_.to(peer)});
  auto on_frame = [this](size_t source, bool stream_ended) {
    ++progress_;
    if (!stream_ended) return;
    std::lock_guard lock(mu_);
    merged_[source] = true;
    cv_.notify_all();
  };
  OMNIB_RETURN_IF_ERROR(merge_.run(dtype_, in_.data, job_.rank, out_.data, mine.begin, mine.end(), kTagReduce, seq_,
                                   sources, on_frame));
  // The owner re-extracts after summing: elements that cancel are not sent.
  const VectorView result = extract_smaller(out_.data, mine.begin, mine.end(), elem_size_, result_scratch_);
  std::lock_guard lock(mu_);
  result_ = result;
  result_ready_ = true;
  ++progress_;
  cv_.notify_all();
  return Status::ok();
}

namespace {

// Histogram counts stream as dense 4-byte elements.
double histogram_bytes(double cells) {
  return stream_wire_bytes(cells, kCountBytes,
                           static_cast<double>(chunk_capacity(true, kCountBytes)));
}

// The algorithm's own split, run on the counts of the actual inputs: every
// round's cells counted per rank, as each rank counts its own. Returns the
// regions; `rounds` gets the number of cells of every histogram round.
std::vector<Slice> split_of(const InputSupport& s, std::vector<size_t>& rounds) {
  BalancedSplit split;
  split.reset(s.count(), s.nodes());
  for (bool more = true; more; more = split.finish_round()) {
    const std::vector<Slice>& cells = split.round_cells();
    rounds.push_back(cells.size());
    std::vector<uint32_t> counts(cells.size());
    for (int r = 0; r < s.nodes(); ++r) {
      for (size_t i = 0; i < cells.size(); ++i)
        counts[i] = static_cast<uint32_t>(s.elements(r, cells[i].begin, cells[i].end()));
      split.add_counts(counts.data());
    }
  }
  std::vector<Slice> regions;
  for (int j = 0; j < s.nodes(); ++j) regions.push_back(split.region(j));
  return regions;
}

// Counted from the inputs: every rank sends every peer its histogram of each
// round, its part of the peer's region, and (as owner) its reduced region.
WireCost exact_cost(const CostInputs& c, const InputSupport& s) {
  std::vector<size_t> rounds;
  const std::vector<Slice> regions = split_of(s, rounds);
  double histograms = 0;
  for (size_t cells : rounds) histograms += histogram_bytes(static_cast<double>(cells));
  std::vector<double> sent(static_cast<size_t>(c.nodes), (c.nodes - 1) * histograms);
  add_owner_exchange_bytes(s, regions, c.elem_size, sent);
  return wire_cost_of(sent, true);
}

// From average densities.
WireCost estimated_cost(const CostInputs& c) {
  const int n = c.nodes;
  // Regions hold equal shares of the non-zeros; with non-zeros spread evenly
  // over the index space that makes them count/n elements long.
  const double m = static_cast<double>(c.count) / n;
  const double upload = smaller_stream_bytes(c.element_density * m, m, c.elem_size);
  const double download = smaller_stream_bytes(c.union_element_density * m, m, c.elem_size);
  // The coarse histogram, and the fine one when the bucket a boundary falls
  // in is expected to hold more than 1/kSlack of a region's share: a bucket
  // holds about total/buckets non-zeros, and at least a whole run of them
  // where they come in runs (non-zero blocks; elements per non-zero block).
  const double buckets = static_cast<double>(std::min(c.count, BalancedSplit::kCoarseBuckets));
  double histogram = histogram_bytes(buckets);
  const double total = n * c.element_density * static_cast<double>(c.count);
  const double run = c.block_density > 0 ? static_cast<double>(c.block_size) * c.element_density / c.block_density : 0;
  const double bucket_length = static_cast<double>(c.count) / buckets;
  if (total > 0 && bucket_length > 1 &&
      std::max(total / buckets, run) * static_cast<double>(BalancedSplit::kSlack) * n > total) {
    const double cells = (n - 1) * std::min(bucket_length, static_cast<double>(BalancedSplit::kFineBuckets));
    histogram += histogram_bytes(cells);
  }
  const double per_rank = (n - 1) * (histogram + upload + download);
  return {per_rank, n * per_rank};
}

}  // namespace

WireCost Oktopk::analytic_cost(const CostInputs& c) {
  if (c.nodes <= 1 || c.count == 0) return {0, 0, true};  // settled without the network
  if (const InputSupport* s = exact_support(c)) return exact_cost(c, *s);
  return estimated_cost(c);
}

namespace {
const CollectiveRegistration kOktopk(own_transport_baseline(
    "oktopk",
    "Ok-Topk sparse allreduce (exact): histogram-balanced regions, sparse reduce to owners in rank order, "
    "allgather of the reduced regions",
    true, Oktopk::create, Oktopk::analytic_cost));
}  // namespace

}  // namespace omnib
