#include "baselines/sparse/oktopk.h"

#include <algorithm>
#include <cstring>

#include "baselines/common/own_transport_baseline.h"
#include "baselines/common/sparse_cost.h"
#include "baselines/common/sparse_stream.h"
#include "engine/trace/trace.h"

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
    : job_(setup.job), dtype_(setup.dtype), elem_size_(dtype_size(setup.dtype)), links_(std::move(links)) {
  lanes_ = std::make_unique<MeshLanes>(links_, job_.rank, other_workers(job_), setup.timeout,
                                       static_cast<MeshLanes::Protocol&>(*this));
  sends_.resize(lanes_->size());
  receives_.resize(lanes_->size());
}

Oktopk::~Oktopk() { lanes_.reset(); }

Status Oktopk::allreduce(const TensorView& in, const TensorView& out) {
  if (auto settled = settled_locally(job_, in, out)) return *settled;
  if (in.count > UINT32_MAX)
    return usage_error(std::to_string(in.count) + " elements do not fit 32-bit indices: use a smaller -e/--maxbytes");
  ++seq_;
  in_ = in;
  out_ = out;
  split_.reset(in.count, job_.nodes);
  my_counts_[0].resize(split_.round_cells().size());
  nonzeros_.scan(in.data, in.count, elem_size_, split_.round_cells(), my_counts_[0].data());
  split_.add_counts(my_counts_[0].data());
  round_ = 0;
  split_ready_ = false;
  result_ready_ = false;
  counted_ = 0;
  merging_ = false;
  regions_written_ = 0;
  for (size_t i = 0; i < lanes_->size(); ++i) {
    sends_[i].stage = SendStage::kCounts;
    PeerReceive& r = receives_[i];
    r.stage = ReceiveStage::kCounts;
    r.reader.emplace(0, split_.round_cells().size(), kCountBytes, kTagHistogram, seq_, lanes_->peer(i),
                     "oktopk histogram");
    r.zeroed = false;
  }
  return lanes_->run();
}

// To every peer: this rank's histogram counts (and the fine counts, when a
// fine round follows), its part of the peer's region, then this rank's
// reduced region.
MeshLanes::Protocol::Next Oktopk::start_next_stream(size_t i, StreamPoster& poster, LaneStep& step) {
  PeerSend& s = sends_[i];
  const int peer = lanes_->peer(i);
  switch (s.stage) {
    case SendStage::kCounts:
      poster.start(kTagHistogram, seq_, counts_view(my_counts_[0]));
      s.stage = SendStage::kFineCounts;
      return Next::kStarted;
    case SendStage::kFineCounts:
      // my_counts_[1] is fixed once round 1 has begun.
      if (round_ > 0) {
        poster.start(kTagHistogram + 1, seq_, counts_view(my_counts_[1]));
        s.stage = SendStage::kPart;
        return Next::kStarted;
      }
      if (!split_ready_) break;
      s.stage = SendStage::kPart;  // no fine round
      [[fallthrough]];
    case SendStage::kPart: {
      if (!split_ready_) break;
      // Reads the input only in the peer's region; nothing writes there
      // until the peer has everything this lane sends.
      trace::Span extract("extract", trace::Kind::kCompute, {.peer = peer});
      poster.start(kTagReduce, seq_, nonzeros_.smaller(split_.region(peer), s.part_scratch));
      s.stage = SendStage::kRegion;
      return Next::kStarted;
    }
    case SendStage::kRegion:
      if (!result_ready_) {
        step.waiting_for = "wait result";
        return Next::kWaiting;
      }
      poster.start(kTagAllgather, seq_, result_);
      s.stage = SendStage::kNone;
      return Next::kStarted;
    case SendStage::kNone:
      return Next::kNone;
  }
  step.waiting_for = "wait counts";
  return Next::kWaiting;
}

// Every peer's histogram counts, round by round; then, once the regions are
// known, every peer's part of this rank's region (merged in rank order) and
// every peer's reduced region.
Result<LaneStep> Oktopk::receive_step() {
  LaneStep step;
  for (auto part : {&Oktopk::take_counts, &Oktopk::merge_parts, &Oktopk::take_regions}) {
    auto moved = (this->*part)();
    if (!moved.is_ok()) return moved.status();
    step.moved |= moved.value();
  }
  step.done = split_ready_ && !merging_ && regions_written_ == lanes_->size();
  return step;
}

Result<bool> Oktopk::take_counts() {
  if (split_ready_) return false;
  bool moved = false;
  for (size_t i = 0; i < lanes_->size(); ++i) {
    PeerReceive& r = receives_[i];
    if (r.stage != ReceiveStage::kCounts) continue;
    auto took = take_arrived(lanes_->link(i), *r.reader, frame_, [&](const Chunk& c) {
      const auto* counts = reinterpret_cast<const uint32_t*>(c.values);
      if (c.dense) {
        split_.add_counts(c.first, counts, c.items);
        return;
      }
      for (uint32_t k = 0; k < c.items; ++k) split_.add_counts(c.indices[k], counts + k, 1);
    });
    if (!took.is_ok()) return took.status();
    moved |= took.value();
    if (!r.reader->done()) continue;
    set_stage(r, ReceiveStage::kCounted);
    ++counted_;
  }
  if (counted_ < lanes_->size()) return moved;
  finish_round();
  return true;
}

// Every peer's counts of the round are added: the regions, or a fine round.
void Oktopk::finish_round() {
  counted_ = 0;
  if (!split_.finish_round()) {
    const Slice mine = split_.region(job_.rank);
    std::vector<RankOrderMerge::Source> sources;
    for (size_t i = 0; i < lanes_->size(); ++i) {
      sources.push_back({lanes_->peer(i), &lanes_->link(i)});
      set_stage(receives_[i], ReceiveStage::kPart);
    }
    merge_.start(dtype_, in_.data, job_.rank, out_.data, mine.begin, mine.end(), kTagReduce, seq_, sources);
    merging_ = true;
    split_ready_ = true;
  } else {
    // A fine round: this rank counts the cells the coarse counts asked for.
    my_counts_[1].resize(split_.round_cells().size());
    nonzeros_.count(split_.round_cells(), my_counts_[1].data());
    split_.add_counts(my_counts_[1].data());
    for (size_t i = 0; i < lanes_->size(); ++i) {
      receives_[i].reader.emplace(0, split_.round_cells().size(), kCountBytes, kTagHistogram + 1, seq_,
                                  lanes_->peer(i), "oktopk histogram");
      set_stage(receives_[i], ReceiveStage::kCounts);
    }
    round_ = 1;
  }
  lanes_->send_waker().notify();
}

// Sums every peer's part of this rank's region with its own, in rank order.
Result<bool> Oktopk::merge_parts() {
  if (!merging_) return false;
  bool moved = false;
  auto on_frame = [this](size_t i, bool stream_ended) {
    if (!stream_ended) return;
    // The peer's link now carries its reduced region.
    PeerReceive& r = receives_[i];
    const Slice theirs = split_.region(lanes_->peer(i));
    r.reader.emplace(theirs.begin, theirs.end(), elem_size_, kTagAllgather, seq_, lanes_->peer(i), "oktopk allgather");
    set_stage(r, ReceiveStage::kRegion);
  };
  trace::Span merge("merge", trace::Kind::kCompute);
  auto done = merge_.advance(on_frame, moved);
  if (!done.is_ok()) return done.status();
  if (!moved && !done.value()) merge.cancel();
  if (!done.value()) return moved;
  merge.end();
  // The owner re-extracts after summing: elements that cancel are not sent.
  trace::Span extract("extract result", trace::Kind::kCompute);
  const Slice mine = split_.region(job_.rank);
  result_ = extract_smaller(out_.data, mine.begin, mine.end(), elem_size_, result_scratch_);
  result_ready_ = true;
  merging_ = false;
  lanes_->send_waker().notify();
  return true;
}

Result<bool> Oktopk::take_regions() {
  bool moved = false;
  for (size_t i = 0; i < lanes_->size(); ++i) {
    PeerReceive& r = receives_[i];
    if (r.stage != ReceiveStage::kRegion) continue;
    auto took = take_arrived(lanes_->link(i), *r.reader, frame_, [&](const Chunk& c) { write_region_chunk(i, c); });
    if (!took.is_ok()) return took.status();
    moved |= took.value();
    if (!r.reader->done()) continue;
    set_stage(r, ReceiveStage::kDone);
    ++regions_written_;
  }
  return moved;
}

void Oktopk::write_region_chunk(size_t i, const Chunk& c) {
  auto* out = out_.as<uint8_t>();
  if (c.dense) {
    std::memcpy(out + c.first * elem_size_, c.values, c.items * elem_size_);
    return;
  }
  // A sparse region leaves zeros where it has no pair.
  PeerReceive& r = receives_[i];
  if (!r.zeroed) {
    const Slice theirs = split_.region(lanes_->peer(i));
    std::memset(out + theirs.begin * elem_size_, 0, theirs.length * elem_size_);
  }
  r.zeroed = true;
  scatter_add(dtype_, out, 0, c.indices, c.values, c.items);
}

void Oktopk::set_stage(PeerReceive& r, ReceiveStage stage) {
  std::lock_guard lock(stage_mu_);
  r.stage = stage;
}

std::vector<int> Oktopk::peers_in(std::initializer_list<ReceiveStage> stages) const {
  std::vector<int> peers;
  for (size_t i = 0; i < lanes_->size(); ++i)
    if (std::find(stages.begin(), stages.end(), receives_[i].stage) != stages.end()) peers.push_back(lanes_->peer(i));
  return peers;
}

std::string Oktopk::send_data_stalled() const {
  std::lock_guard lock(stage_mu_);
  const auto waiting = peers_in({ReceiveStage::kCounts, ReceiveStage::kPart});
  return std::string(split_ready_ ? "the parts of this rank's region" : "the histogram counts") + " from " +
         name_ranks(waiting) + " did not arrive within the timeout (is a peer stuck? raise -T if it is only slow)";
}

std::string Oktopk::receive_stalled() const {
  const auto waiting = merging_ ? merge_.waiting_on() : peers_in({ReceiveStage::kCounts, ReceiveStage::kRegion});
  return "nothing arrived from " + name_ranks(waiting) +
         " within the timeout (is a peer stuck? raise -T if it is only slow)";
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
  const double upload = smaller_stream_bytes(c.stats.element_density * m, m, c.elem_size);
  const double download = smaller_stream_bytes(c.stats.union_element_density * m, m, c.elem_size);
  // The coarse histogram, and the fine one when the bucket a boundary falls
  // in is expected to hold more than 1/kSlack of a region's share: a bucket
  // holds about total/buckets non-zeros, and at least a whole run of them
  // where they come in runs (non-zero blocks; elements per non-zero block).
  const double buckets = static_cast<double>(std::min(c.count, BalancedSplit::kCoarseBuckets));
  double histogram = histogram_bytes(buckets);
  const double total = n * c.stats.element_density * static_cast<double>(c.count);
  const double run = c.stats.block_density > 0 ? static_cast<double>(c.omni.block_size) * c.stats.element_density / c.stats.block_density : 0;
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
