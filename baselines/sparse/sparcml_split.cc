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

Result<std::unique_ptr<Collective>> SparcmlSplit::create(const CollectiveSetup& setup) {
  auto links = PeerLinks::establish(*setup.links, full_mesh_pairs(setup.job.nodes));
  if (!links.is_ok()) return links.status();
  return std::unique_ptr<Collective>(new SparcmlSplit(setup, links.take()));
}

SparcmlSplit::SparcmlSplit(const CollectiveSetup& setup, PeerLinks links)
    : job_(setup.job), dtype_(setup.dtype), elem_size_(dtype_size(setup.dtype)), links_(std::move(links)) {
  lanes_ = std::make_unique<MeshLanes>(links_, job_.rank, other_workers(job_), setup.timeout,
                                       static_cast<MeshLanes::Protocol&>(*this));
  sends_.resize(lanes_->size());
  receives_.resize(lanes_->size());
}

SparcmlSplit::~SparcmlSplit() { lanes_.reset(); }

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
  if (lanes_->size() == 0) return Status::ok();
  ++seq_;
  in_ = in;
  out_ = out;
  for (size_t i = 0; i < lanes_->size(); ++i) {
    sends_[i].stage = SendStage::kPart;
    PeerReceive& r = receives_[i];
    r.stage = ReceiveStage::kPart;
    r.reader.emplace(mine.begin, mine.end(), elem_size_, kTagReduceScatter, seq_, lanes_->peer(i),
                     "sparcml-split reduce-scatter");
    r.wrote = false;
  }
  sending_slices_ = false;
  parts_summed_ = 0;
  slices_written_ = 0;
  result_ready_ = false;
  send_phase_begin_ = receive_phase_begin_ = trace::now_ns();
  return lanes_->run();
}

// To every peer: its part of this rank's tensor, then (once this rank's
// slice is reduced) the reduced slice.
MeshLanes::Protocol::Next SparcmlSplit::start_next_stream(size_t i, StreamPoster& poster, LaneStep& step) {
  PeerSend& s = sends_[i];
  const int peer = lanes_->peer(i);
  switch (s.stage) {
    case SendStage::kPart: {
      // Reads the input only in the peer's slice; nothing writes there
      // until the peer has everything this lane sends.
      trace::Span extract("extract", trace::Kind::kCompute, {.peer = peer});
      const Slice theirs = even_slice(in_.count, job_.nodes, peer);
      poster.start(kTagReduceScatter, seq_,
                   extract_smaller(in_.data, theirs.begin, theirs.end(), elem_size_, s.part_scratch));
      s.stage = SendStage::kSlice;
      return Next::kStarted;
    }
    case SendStage::kSlice:
      if (!result_ready_) {
        step.waiting_for = "wait result";
        return Next::kWaiting;
      }
      if (!sending_slices_) {
        trace::record("reduce-scatter send", trace::Kind::kPhase, send_phase_begin_, trace::now_ns(), {.step = 0});
        send_phase_begin_ = trace::now_ns();
        sending_slices_ = true;
      }
      poster.start(kTagAllgather, seq_, result_);
      s.stage = SendStage::kNone;
      return Next::kStarted;
    case SendStage::kNone:
      break;
  }
  return Next::kNone;
}

void SparcmlSplit::sends_finished() {
  trace::record("allgather send", trace::Kind::kPhase, send_phase_begin_, trace::now_ns(), {.step = 1});
}

// From every peer: its part of this rank's slice (summed in), then the
// peer's reduced slice (written to the output).
Result<LaneStep> SparcmlSplit::receive_step() {
  LaneStep step;
  const size_t peers = lanes_->size();
  for (size_t i = 0; i < peers; ++i) {
    PeerReceive& r = receives_[i];
    if (r.stage == ReceiveStage::kDone) continue;
    auto took = take_arrived(lanes_->link(i), *r.reader, frame_, [&](const Chunk& c) { apply_chunk(i, c); });
    if (!took.is_ok()) return took.status();
    step.moved |= took.value();
    if (!r.reader->done()) continue;
    {
      std::lock_guard lock(stage_mu_);
      r.stage = r.stage == ReceiveStage::kPart ? ReceiveStage::kSlice : ReceiveStage::kDone;
    }
    if (r.stage == ReceiveStage::kDone) {
      ++slices_written_;
      continue;
    }
    const Slice theirs = even_slice(out_.count, job_.nodes, lanes_->peer(i));
    r.reader.emplace(theirs.begin, theirs.end(), elem_size_, kTagAllgather, seq_, lanes_->peer(i),
                     "sparcml-split allgather");
    if (++parts_summed_ == peers) publish_result();
  }
  if (slices_written_ == peers) {
    trace::record("allgather receive", trace::Kind::kPhase, receive_phase_begin_, trace::now_ns(), {.step = 1});
    step.done = true;
  }
  return step;
}

void SparcmlSplit::apply_chunk(size_t i, const Chunk& c) {
  PeerReceive& r = receives_[i];
  if (r.stage == ReceiveStage::kPart) {
    add_view_into(dtype_, c.view(), out_.data);
    return;
  }
  auto* out = out_.as<uint8_t>();
  // A sparse slice leaves zeros where it has no pair.
  if (!r.wrote && !c.dense) {
    const Slice theirs = even_slice(out_.count, job_.nodes, lanes_->peer(i));
    std::memset(out + theirs.begin * elem_size_, 0, theirs.length * elem_size_);
  }
  r.wrote = true;
  if (c.dense)
    std::memcpy(out + c.first * elem_size_, c.values, c.items * elem_size_);
  else
    add_view_into(dtype_, c.view(), out_.data);
}

void SparcmlSplit::publish_result() {
  trace::record("reduce-scatter receive", trace::Kind::kPhase, receive_phase_begin_, trace::now_ns(), {.step = 0});
  trace::Span extract("extract result", trace::Kind::kCompute);
  const Slice mine = even_slice(out_.count, job_.nodes, job_.rank);
  result_ = extract_smaller(out_.data, mine.begin, mine.end(), elem_size_, result_scratch_);
  result_ready_ = true;
  lanes_->send_waker().notify();
  extract.end();
  receive_phase_begin_ = trace::now_ns();
}

std::string SparcmlSplit::send_data_stalled() const {
  std::vector<int> waiting;
  std::lock_guard lock(stage_mu_);
  for (size_t i = 0; i < lanes_->size(); ++i)
    if (receives_[i].stage == ReceiveStage::kPart) waiting.push_back(lanes_->peer(i));
  return "the parts of this rank's slice from " + name_ranks(waiting) +
         " did not arrive within the timeout (is a peer stuck? raise -T if it is only slow)";
}

std::string SparcmlSplit::receive_stalled() const {
  std::vector<int> waiting;
  for (size_t i = 0; i < lanes_->size(); ++i)
    if (receives_[i].stage != ReceiveStage::kDone) waiting.push_back(lanes_->peer(i));
  return "nothing arrived from " + name_ranks(waiting) +
         " within the timeout (is a peer stuck? raise -T if it is only slow)";
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
  const double upload = smaller_stream_bytes(c.stats.element_density * m, m, c.elem_size);
  const double download = smaller_stream_bytes(c.stats.union_element_density * m, m, c.elem_size);
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
