#include "baselines/sparse/sparcml_split.h"

#include <cstring>

#include "baselines/common/even_partition.h"
#include "baselines/common/sparse_cost.h"
#include "baselines/common/sparse_stream.h"
#include "engine/trace/trace.h"

namespace omnib {
namespace {

constexpr uint32_t kTagReduceScatter = 1;
constexpr uint32_t kTagAllgather = 2;

}  // namespace

SparcmlSplit::SparcmlSplit(const CollectiveSetup& setup, std::vector<PeerLinks> links)
    : OwnTransportBaseline(setup, std::move(links), 0, Indices::kUint32) {
  start_mesh_lanes(*this);
}

Status SparcmlSplit::exchange() {
  // This rank's own contribution to its slice starts the sum.
  const Slice mine = slice_of(job_.rank);
  trace::Span own("copy own slice", trace::Kind::kCompute);
  if (out().data != in().data)
    std::memcpy(out().as<uint8_t>() + mine.begin * elem_size_, in().as<const uint8_t>() + mine.begin * elem_size_,
                mine.length * elem_size_);
  own.end();
  MeshLanes& lanes = mesh_lanes();
  parts_.resize(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i)
    parts_[i].emplace(mine.begin, mine.end(), elem_size_, kTagReduceScatter, seq(), lanes.peer(i),
                      "sparcml-split reduce-scatter");
  stages_.reset(lanes, ReceiveStage::kPart);
  owners_.start(lanes, out(), seq(),
                {job_.rank, kTagReduceScatter, kTagAllgather, [this](int rank) { return slice_of(rank); },
                 [this](Slice theirs, SparseVector& scratch) {
                   return extract_smaller(in().data, theirs.begin, theirs.end(), elem_size_, scratch);
                 },
                 "sparcml-split allgather"});
  sending_slices_ = false;
  parts_summed_ = 0;
  send_phase_begin_ = receive_phase_begin_ = trace::now_ns();
  return lanes.run();
}

// To every peer: its part of this rank's tensor, then (once this rank's
// slice is reduced) the reduced slice.
MeshLanes::Protocol::Next SparcmlSplit::start_next_stream(size_t i, StreamPoster& poster, LaneStep& step) {
  if (!sending_slices_ && owners_.region_next(i) && owners_.published()) {
    trace::record("reduce-scatter send", trace::Kind::kPhase, send_phase_begin_, trace::now_ns(), {.step = 0});
    send_phase_begin_ = trace::now_ns();
    sending_slices_ = true;
  }
  return owners_.start_stream(i, poster, step);
}

void SparcmlSplit::sends_finished() {
  trace::record("allgather send", trace::Kind::kPhase, send_phase_begin_, trace::now_ns(), {.step = 1});
}

// From every peer: its part of this rank's slice (summed in), then the
// peer's reduced slice (written to the output).
Result<LaneStep> SparcmlSplit::receive_step() {
  LaneStep step;
  auto parts = sum_parts();
  if (!parts.is_ok()) return parts.status();
  auto slices = owners_.take_arrived(frame_);
  if (!slices.is_ok()) return slices.status();
  step.moved = parts.value() || slices.value();
  if (owners_.all_written()) {
    trace::record("allgather receive", trace::Kind::kPhase, receive_phase_begin_, trace::now_ns(), {.step = 1});
    step.done = true;
  }
  return step;
}

Result<bool> SparcmlSplit::sum_parts() {
  MeshLanes& lanes = mesh_lanes();
  bool moved = false;
  for (size_t i = 0; i < lanes.size(); ++i) {
    if (stages_[i] != ReceiveStage::kPart) continue;
    auto took = take_arrived(lanes.link(i), *parts_[i], frame_,
                             [this](const Chunk& c) { add_view_into(dtype_, c.view(), out().data); });
    if (!took.is_ok()) return took.status();
    moved |= took.value();
    if (!parts_[i]->done()) continue;
    stages_.set(i, ReceiveStage::kSlice);
    owners_.expect(i);
    if (++parts_summed_ < lanes.size()) continue;
    trace::record("reduce-scatter receive", trace::Kind::kPhase, receive_phase_begin_, trace::now_ns(), {.step = 0});
    owners_.publish();
    receive_phase_begin_ = trace::now_ns();
  }
  return moved;
}

std::string SparcmlSplit::send_data_stalled() const {
  return did_not_arrive("the parts of this rank's slice", stages_.peers_in({ReceiveStage::kPart}));
}

std::string SparcmlSplit::receive_stalled() const {
  std::vector<int> waiting;
  for (size_t i = 0; i < mesh_lanes().size(); ++i)
    if (stages_[i] == ReceiveStage::kPart || owners_.receiving(i)) waiting.push_back(mesh_lanes().peer(i));
  return nothing_arrived_from(waiting);
}

WireCost sparcml_split_analytic_cost(const CostInputs& c) {
  const int n = c.nodes;
  if (n <= 1 || c.count == 0) return {0, 0, true};  // settled without the network
  if (const InputSupport* s = exact_support(c)) {
    std::vector<Slice> slices;
    for (int j = 0; j < n; ++j) slices.push_back(even_slice(c.count, n, j));
    std::vector<double> sent(static_cast<size_t>(n), 0.0);
    add_owner_exchange_bytes(*s, slices, c.elem_size, sent);
    return wire_cost_of(sent, true);
  }
  const OwnerExchangeEstimate owners = owner_exchange_estimate(c);
  return all_peers_cost(n, owners.upload + owners.download);
}

namespace {
const CollectiveRegistration kSplit(own_transport_baseline<SparcmlSplit>(
    {"sparcml-split",
     "SparCML split allgather: sparse reduce-scatter to slice owners, then allgather of the reduced slices", true,
     one_link_set<full_mesh_pairs>, sparcml_split_analytic_cost}));
}  // namespace

}  // namespace omnib
