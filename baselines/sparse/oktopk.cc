#include "baselines/sparse/oktopk.h"

#include <algorithm>
#include <cstring>

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
constexpr size_t kCountBytes = kHistogramCountBytes;

VectorView counts_view(const std::vector<uint32_t>& counts) {
  VectorView v;
  v.end = counts.size();
  v.dense = true;
  v.elem_size = kCountBytes;
  v.values = reinterpret_cast<const uint8_t*>(counts.data());
  return v;
}

}  // namespace

Oktopk::Oktopk(const CollectiveSetup& setup, std::vector<PeerLinks> links)
    : OwnTransportBaseline(setup, std::move(links), 0, Indices::kUint32) {
  start_mesh_lanes(*this);
}

Status Oktopk::exchange() {
  split_.reset(in().count, job_.nodes);
  my_counts_[0].resize(split_.round_cells().size());
  nonzeros_.scan(in().data, in().count, elem_size_, split_.round_cells(), my_counts_[0].data());
  split_.add_counts(my_counts_[0].data());
  round_ = 0;
  split_ready_ = false;
  counted_ = 0;
  merging_ = false;
  MeshLanes& lanes = mesh_lanes();
  sends_.assign(lanes.size(), SendStage::kCounts);
  stages_.reset(lanes, ReceiveStage::kCounts);
  expect_counts(kTagHistogram);
  owners_.start(
      lanes, out(), seq(),
      {job_.rank, kTagReduce, kTagAllgather, [this](int rank) { return split_.region(rank); },
       [this](Slice region, SparseVector& scratch) { return nonzeros_.smaller(region, scratch); }, "oktopk allgather"});
  return lanes.run();
}

// To every peer: this rank's histogram counts (and the fine counts, when a
// fine round follows), its part of the peer's region, then this rank's
// reduced region.
MeshLanes::Protocol::Next Oktopk::start_next_stream(size_t i, StreamPoster& poster, LaneStep& step) {
  SendStage& stage = sends_[i];
  switch (stage) {
    case SendStage::kCounts:
      poster.start(kTagHistogram, seq(), counts_view(my_counts_[0]));
      stage = SendStage::kFineCounts;
      return Next::kStarted;
    case SendStage::kFineCounts:
      // my_counts_[1] is fixed once round 1 has begun.
      if (round_ > 0) {
        poster.start(kTagHistogram + 1, seq(), counts_view(my_counts_[1]));
        stage = SendStage::kOwners;
        return Next::kStarted;
      }
      if (!split_ready_) break;
      stage = SendStage::kOwners;  // no fine round
      [[fallthrough]];
    case SendStage::kOwners:
      if (!split_ready_) break;
      return owners_.start_stream(i, poster, step);
  }
  step.waiting_for = "wait counts";
  return Next::kWaiting;
}

// Every peer's histogram counts, round by round; then, once the regions are
// known, every peer's part of this rank's region (merged in rank order) and
// every peer's reduced region.
Result<LaneStep> Oktopk::receive_step() {
  LaneStep step;
  for (auto part : {&Oktopk::take_counts, &Oktopk::merge_parts}) {
    auto moved = (this->*part)();
    if (!moved.is_ok()) return moved.status();
    step.moved |= moved.value();
  }
  auto regions = owners_.take_arrived(frame_);
  if (!regions.is_ok()) return regions.status();
  step.moved |= regions.value();
  step.done = split_ready_ && !merging_ && owners_.all_written();
  return step;
}

Result<bool> Oktopk::take_counts() {
  if (split_ready_) return false;
  MeshLanes& lanes = mesh_lanes();
  bool moved = false;
  for (size_t i = 0; i < lanes.size(); ++i) {
    if (stages_[i] != ReceiveStage::kCounts) continue;
    auto took = take_arrived(lanes.link(i), *counts_[i], frame_, [&](const Chunk& c) {
      const auto* counts = reinterpret_cast<const uint32_t*>(c.values);
      if (c.dense) {
        split_.add_counts(c.first, counts, c.items);
        return;
      }
      for (uint32_t k = 0; k < c.items; ++k) split_.add_counts(c.indices[k], counts + k, 1);
    });
    if (!took.is_ok()) return took.status();
    moved |= took.value();
    if (!counts_[i]->done()) continue;
    stages_.set(i, ReceiveStage::kCounted);
    ++counted_;
  }
  if (counted_ < lanes.size()) return moved;
  finish_round();
  return true;
}

// Every peer's counts of the round are added: the regions, or a fine round.
void Oktopk::finish_round() {
  MeshLanes& lanes = mesh_lanes();
  counted_ = 0;
  if (!split_.finish_round()) {
    const Slice mine = split_.region(job_.rank);
    std::vector<RankOrderMerge::Source> sources;
    for (size_t i = 0; i < lanes.size(); ++i) {
      sources.push_back({lanes.peer(i), &lanes.link(i)});
      stages_.set(i, ReceiveStage::kPart);
    }
    merge_.start(dtype_, in().data, job_.rank, out().data, mine.begin, mine.end(), kTagReduce, seq(), sources);
    merging_ = true;
    split_ready_ = true;
  } else {
    // A fine round: this rank counts the cells the coarse counts asked for.
    my_counts_[1].resize(split_.round_cells().size());
    nonzeros_.count(split_.round_cells(), my_counts_[1].data());
    split_.add_counts(my_counts_[1].data());
    expect_counts(kTagHistogram + 1);
    round_ = 1;
  }
  lanes.send_waker().notify();
}

// Every peer's counts of the round under way come next on its link.
void Oktopk::expect_counts(uint32_t tag) {
  MeshLanes& lanes = mesh_lanes();
  counts_.resize(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    counts_[i].emplace(0, split_.round_cells().size(), kCountBytes, tag, seq(), lanes.peer(i), "oktopk histogram");
    stages_.set(i, ReceiveStage::kCounts);
  }
}

// Sums every peer's part of this rank's region with its own, in rank order.
Result<bool> Oktopk::merge_parts() {
  if (!merging_) return false;
  bool moved = false;
  auto on_frame = [this](size_t i, bool stream_ended) {
    if (!stream_ended) return;
    // The peer's link now carries its reduced region.
    owners_.expect(i);
    stages_.set(i, ReceiveStage::kRegion);
  };
  trace::Span merge("merge", trace::Kind::kCompute);
  auto done = merge_.advance(on_frame, moved);
  if (!done.is_ok()) return done.status();
  if (!moved && !done.value()) merge.cancel();
  if (!done.value()) return moved;
  merge.end();
  owners_.publish();
  merging_ = false;
  return true;
}

std::string Oktopk::send_data_stalled() const {
  const auto waiting = stages_.peers_in({ReceiveStage::kCounts, ReceiveStage::kPart});
  return did_not_arrive(split_ready_ ? "the parts of this rank's region" : "the histogram counts", waiting);
}

std::string Oktopk::receive_stalled() const {
  if (merging_) return nothing_arrived_from(merge_.waiting_on());
  std::vector<int> waiting;
  for (size_t i = 0; i < mesh_lanes().size(); ++i)
    if (stages_[i] == ReceiveStage::kCounts || owners_.receiving(i)) waiting.push_back(mesh_lanes().peer(i));
  return nothing_arrived_from(waiting);
}

namespace {

// Histogram counts stream as dense 4-byte elements.
double histogram_bytes(double cells) {
  return stream_wire_bytes(cells, kCountBytes,
                           static_cast<double>(chunk_capacity(true, kCountBytes)));
}

// Counted from the inputs: every rank sends every peer its histogram of each
// round, its part of the peer's region, and (as owner) its reduced region.
WireCost exact_cost(const CostInputs& c, const InputSupport& s) {
  std::vector<size_t> rounds;
  const std::vector<Slice> regions = balanced_regions(s, rounds);
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
  const OwnerExchangeEstimate owners = owner_exchange_estimate(c);
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
  return all_peers_cost(n, histogram + owners.upload + owners.download);
}

}  // namespace

WireCost oktopk_analytic_cost(const CostInputs& c) {
  if (c.nodes <= 1 || c.count == 0) return {0, 0, true};  // settled without the network
  if (const InputSupport* s = exact_support(c)) return exact_cost(c, *s);
  return estimated_cost(c);
}

namespace {
const CollectiveRegistration kOktopk(own_transport_baseline<Oktopk>(
    {"oktopk",
     "Ok-Topk sparse allreduce (exact): histogram-balanced regions, sparse reduce to owners in rank order, "
     "allgather of the reduced regions",
     true, one_link_set<full_mesh_pairs>, oktopk_analytic_cost}));
}  // namespace

}  // namespace omnib
