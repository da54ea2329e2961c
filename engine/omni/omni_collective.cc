#include "engine/omni/omni_collective.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "engine/block_scan.h"
#include "engine/link_lane.h"
#include "engine/omni/device_block_io.h"
#include "engine/omni/direct_lanes.h"
#include "engine/omni/host_block_io.h"
#include "engine/omni/omni_cost.h"
#include "engine/trace/trace.h"

namespace omnib {
namespace {

// The tag of a worker's batches on the direct route (on the shards route, 0).
constexpr uint32_t kDirectTag = 1;

Status expect_frame(const Frame& f, wire::FrameType type, uint64_t seq, int peer) {
  if (f.type() != type)
    return unavailable_error("rank " + std::to_string(peer) + " sent frame type " + std::to_string(f.header.type) +
                             " where the omni protocol expects " + std::to_string(static_cast<int>(type)));
  if (f.header.seq != seq)
    return unavailable_error("rank " + std::to_string(peer) + " is on collective " + std::to_string(f.header.seq) +
                             ", this rank on " + std::to_string(seq) + " (ranks out of step)");
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Collective>> OmniCollective::create(const CollectiveSetup& setup, OmniOptions options) {
  const JobLayout& job = setup.job;
  const int shards = job.aggregators > 0 ? job.aggregators : job.nodes;
  std::vector<LinkSpec> specs;
  for (int w = 0; w < job.nodes; ++w)
    for (int s = 0; s < shards; ++s) specs.push_back({w, job.aggregators > 0 ? job.nodes + s : s});
  std::unique_ptr<WorkerBlockIo> io;
  if (job.is_worker()) {
    WorkerBlockIoFactory factory = HostBlockIo::create;
    if (setup.device == DeviceKind::kCuda) {
      factory = device_block_io_factory();
      if (factory == nullptr)
        return unavailable_error("omni: this build has no CUDA kernels for device tensors (configure with CUDA)");
    }
    auto made = factory(shards);
    if (!made.is_ok()) return made.status().with_context("omni: ");
    io = made.take();
  }
  if (setup.route == RoutePolicy::kDirect && (job.aggregators > 0 || job.nodes < 2))
    return usage_error("omni: --route direct needs two or more workers and no dedicated aggregators (use --route auto or shards)");
  auto direct_lanes = direct_route_lanes(std::getenv(kDirectLanesVar), setup.local_workers, usable_cores());
  if (!direct_lanes.is_ok()) return direct_lanes.status().with_context("omni: ");
  auto links = setup.links->establish(specs);
  if (!links.is_ok()) return links.status().with_context("omni: ");
  return std::unique_ptr<Collective>(
      new OmniCollective(setup, options, direct_lanes.value() == 1, links.take(), std::move(io)));
}

OmniCollective::OmniCollective(const CollectiveSetup& setup, OmniOptions options, bool direct_on_one_lane,
                               LinkSet links, std::unique_ptr<WorkerBlockIo> io)
    : direct_on_one_lane_(direct_on_one_lane),
      job_(setup.job),
      options_(options),
      elem_size_(dtype_size(setup.dtype)),
      block_size_(setup.block_size),
      link_rate_bps_(setup.link_rate_bps),
      layout_kind_(setup.shard_layout),
      encoding_(options.dense ? EncodingPolicy::kBlocks : setup.encoding),
      timeout_(setup.timeout),
      links_(std::move(links)),
      io_(std::move(io)),
      route_policy_(options.dense ? RoutePolicy::kShards : setup.route) {
  int lanes = 0;
  if (job_.is_worker()) {
    lanes += 2;
    send_shards_.resize(static_cast<size_t>(shards()));
    result_frames_.resize(static_cast<size_t>(shards()));
    for (int s = 0; s < shards(); ++s) to_shard(s).set_wakers(&receive_waker_, &send_waker_);
  }
  if (my_shard() >= 0) {
    lanes += 1;
    aggregator_ = std::make_unique<ShardAggregator>(job_.nodes, setup.dtype);
    for (int w = 0; w < job_.nodes; ++w) from_worker(w).set_wakers(&aggregate_waker_, &aggregate_waker_);
  }
  lanes_ = std::make_unique<LaneGroup>(lanes);
  // Auto's first call takes the shards route: nothing is learned yet.
  if (route_policy_ == RoutePolicy::kDirect && direct_possible()) route_ = RoutePolicy::kDirect;
}

OmniCollective::~OmniCollective() {
  abort();
  lanes_.reset();
  // The links outlive this object's wakers otherwise.
  for (auto* ends : {&links_.dialer_end, &links_.acceptor_end})
    for (auto& c : *ends)
      if (c) c->set_wakers(nullptr, nullptr);
}

int OmniCollective::my_shard() const {
  if (job_.aggregators > 0) return job_.rank >= job_.nodes ? job_.rank - job_.nodes : -1;
  return job_.rank;
}

void OmniCollective::abort() { links_.abort_all(); }  // every waiting lane wakes to the failure

void OmniCollective::size_streams() {
  const uint64_t tensor_bytes = static_cast<uint64_t>(layout_.count()) * elem_size_;
  auto sizes = [this] {
    return std::make_tuple(to_shards_.frame_bytes, to_shards_.inflight_bytes, to_workers_.frame_bytes);
  };
  const auto before = sizes();
  // A shard hears from every worker; a worker from every shard in use. The
  // direct route cuts its one stream as a shard's would be cut, from the
  // budget of a link that carries no results.
  const auto active = static_cast<uint64_t>(active_shards_);
  const uint64_t budget = direct() ? direct_receive_budget_bytes(link_rate_bps_) : receive_budget_bytes(link_rate_bps_);
  to_shards_ = tune_streams(link_rate_bps_, job_.nodes, tensor_bytes / active, budget);
  to_workers_ = tune_streams(link_rate_bps_, active_shards_, tensor_bytes / active, receive_budget_bytes(link_rate_bps_));
  cut_ = BatchCut::for_blocks(block_size_ * elem_size_, to_shards_.frame_bytes, encoding_);
  if (before == sizes()) return;
  // Each end sizes what it receives.
  if (job_.is_worker())
    for (int s = 0; s < shards(); ++s)
      to_shard(s).set_windows(to_workers_.recv_frames, to_shards_.send_frames, to_workers_.inflight_bytes);
  if (my_shard() >= 0)
    for (int w = 0; w < job_.nodes; ++w)
      from_worker(w).set_windows(to_shards_.recv_frames, to_workers_.send_frames, to_shards_.inflight_bytes);
}

Status OmniCollective::allreduce(const TensorView& in, const TensorView& out) {
  if (in.count != out.count) return usage_error("omni: input and output counts differ");
  ++seq_;
  // A new tensor size starts afresh: its first call takes the shards route.
  if (route_policy_ == RoutePolicy::kAuto && in.count != layout_.count()) route_ = RoutePolicy::kShards;
  layout_ = BlockLayout(in.count, block_size_);
  const size_t block_bytes = block_size_ * elem_size_;
  const uint64_t blocks = layout_.num_blocks();
  active_shards_ = ShardMap::active_shards(block_bytes, blocks, shards());  // the rest sit this call out
  const int streams = direct() ? 1 : active_shards_;  // the direct route streams the whole tensor as one
  map_ = ShardMap(blocks, streams, layout_kind_, ShardMap::default_stripe(block_bytes, blocks, streams));
  size_streams();
  if (io_) OMNIB_RETURN_IF_ERROR(io_->begin(in, out, layout_, map_));
  if (aggregator_) {
    aggregator_->reset(layout_);
    aggregator_->set_range_shapes(route_policy_ == RoutePolicy::kAuto);  // for the route choice alone
  }
  traffic_ = RouteTraffic{};
  shard_inputs_ = 0;
  in_place_ = in.data == out.data;
  unsent_from_.store(direct() && in_place_ ? 0 : kEndOfStream, std::memory_order_relaxed);
  last_route_ = route_policy_name(route_);
  const int64_t begun = trace::now_ns();  // a point: which route this call takes
  trace::record(direct() ? "route direct" : "route shards", trace::Kind::kCompute, begun, begun);

  std::vector<Status (OmniCollective::*)()> roles;
  const bool one_lane = direct() && direct_on_one_lane_;
  if (one_lane != links_wake_one_lane_) {
    // One lane waits on one Waker: the send events of this rank's worker
    // links must tell it too.
    for (int s = 0; s < shards(); ++s)
      to_shard(s).set_wakers(&receive_waker_, one_lane ? &aggregate_waker_ : &send_waker_);
    links_wake_one_lane_ = one_lane;
  }
  if (one_lane) {
    roles = {&OmniCollective::send_and_aggregate_direct};
  } else if (direct()) {
    roles = {&OmniCollective::send_all, &OmniCollective::aggregate_direct};  // every rank is a worker and a shard
  } else {
    if (job_.is_worker()) roles = {&OmniCollective::send_all, &OmniCollective::receive_all};
    if (aggregator_ && my_shard() < map_.shards()) roles.push_back(&OmniCollective::aggregate);
  }
  std::function<Status(int)> body = [&](int lane) { return (this->*roles[static_cast<size_t>(lane)])(); };
  std::function<void()> on_failure = [this] { abort(); };
  // A lane per role: the direct route leaves the shard's third lane asleep.
  // (A failure goes up as it is: the harness names the rank and algorithm.)
  OMNIB_RETURN_IF_ERROR(lanes_->run(static_cast<int>(roles.size()), body, on_failure));
  // Every rank saw the same traffic: all pick the same route for the next call.
  route_ = next_route(route_policy_, route_, traffic_, job_.nodes, direct_possible());
  return Status::ok();
}

// Worker side: every shard's blocks, each shard's in increasing order, as
// the scan finds them; a batch goes to a shard whenever the shard's link
// has room and the block after the batch (its look-ahead) is known.
Status OmniCollective::send_all() {
  trace::name_thread("send to shards");
  begin_send();
  auto step = [this]() -> Result<LaneStep> {
    LaneStep s;
    s.waiting_for = "wait window";
    OMNIB_RETURN_IF_ERROR(send_round(s.moved));
    s.done = send_phase_ == SendPhase::kSent;
    return s;
  };
  return run_link_lane(send_waker_, timeout_, nullptr, step, [this] { return send_stall_message(); });
}

void OmniCollective::begin_send() {
  const int peers = destinations();
  for (int s = 0; s < peers; ++s) {
    SendShard& ss = send_shards_[static_cast<size_t>(s)];
    ss.found.clear();
    ss.nonzeros.clear();
    ss.taken.clear();
    ss.batch_ends.clear();
    ss.cut_to = 0;
    ss.cut_weight = 0;
    // Posted sends point into `found`: it must never move during the call.
    if (s < map_.shards()) ss.found.reserve(map_.count(s));
    // Twice a window: a destination may run that far ahead of the slowest.
    ss.packed.reset(2 * (to_shards_.send_frames + 1));
    ss.sent = 0;
    ss.ended = false;
    ss.last_ticket = to_shard(s).sends_done();
    ss.first_ticket = ss.last_ticket;
    ss.acked = ss.last_ticket;
    ss.unsent_from = 0;
    ss.headers.resize(to_shards_.send_frames + 1);
  }
  scanned_ = 0;
  send_phase_ = SendPhase::kStreaming;
}

// One pass of the send lane: while streaming, the batches every destination
// has room for, then the next piece of the scan; once every stream has
// ended, whether the last sends have finished.
Status OmniCollective::send_round(bool& moved) {
  if (send_phase_ == SendPhase::kDraining) return drain_sends(moved);
  const uint64_t blocks = layout_.num_blocks();
  const int peers = destinations();
  bool all_ended = true;
  const bool complete = scanned_ == blocks;
  // The batches every destination of the direct route's one stream has
  // finished: its packed payloads up to there may be reused.
  uint64_t finished_by_all = ~uint64_t{0};
  for (int s = 0; s < peers; ++s) {
    publish_sent(send_shards_[static_cast<size_t>(s)], to_shard(s));
    finished_by_all = std::min(finished_by_all, send_shards_[static_cast<size_t>(s)].batches_finished());
  }
  for (int i = 0; i < peers; ++i) {
    const int s = (job_.rank + i) % peers;  // ranks start on different shards
    SendShard& ss = send_shards_[static_cast<size_t>(s)];
    Connection& link = to_shard(s);
    if (ss.ended) continue;
    all_ended = false;
    SendShard& stream = send_shards_[static_cast<size_t>(stream_of(s))];
    // This destination's next batch, once the stream's cut reached it (an
    // empty stream ends with a batch of no blocks).
    cut_stream(stream, complete);
    const uint64_t k = ss.batches_posted();
    size_t n = 0;
    if (k < stream.batch_ends.size())
      n = stream.batch_ends[k] - ss.sent;
    else if (!(complete && ss.sent == stream.found.size()))
      continue;
    // No room: build nothing yet. (Counted from `acked`, so no header slot
    // is reused before publish_sent has read it.)
    if (ss.last_ticket - ss.acked >= link.send_window()) continue;
    const size_t slot = (ss.last_ticket + 1) % ss.headers.size();
    BatchHeader& header = ss.headers[slot];
    const uint64_t next = ss.sent + n < stream.found.size() ? stream.found[ss.sent + n] : kEndOfStream;
    const std::span<const uint64_t> batch(stream.found.data() + ss.sent, n);
    values_iov_.clear();
    bool have_values = false;  // values_iov_ filled: blocks go whole, or are packed from the tensor
    auto whole_values = [&] {
      if (!have_values) io_->value_iovecs(batch, values_iov_);
      have_values = true;
    };
    const UninitBytes* payload = nullptr;
    BlockEncoding encoding = BlockEncoding::kBlocks;
    if (encoding_ != EncodingPolicy::kBlocks) {
      // On the shards route a stream has one destination: this one.
      PackedBatches::Entry* entry = stream.packed.get(k, direct() ? finished_by_all : ss.batches_finished());
      if (entry == nullptr) continue;  // a slower destination still sends what held its slot
      if (!entry->encoded) {
        BatchShape shape;
        for (size_t i = 0; i < n; ++i)
          shape.add_block(layout_.block_begin(batch[i]), layout_.block_length(batch[i]), stream.nonzeros[ss.sent + i]);
        entry->encoding = choose_encoding(encoding_, shape, elem_size_);
        if (entry->encoding != BlockEncoding::kBlocks) {
          trace::Span pack("pack", trace::Kind::kCompute, {.shard = s, .blocks = n});
          const std::span<const uint64_t> firsts(stream.taken.first.data() + ss.sent, n);
          if (std::find(firsts.begin(), firsts.end(), FoundElements::kNotTaken) == firsts.end()) {
            const uint64_t at = n > 0 ? firsts[0] : 0;
            OMNIB_RETURN_IF_ERROR(pack_sparse_taken(
                entry->encoding, batch, std::span<const uint32_t>(stream.nonzeros.data() + ss.sent, n), layout_,
                elem_size_, stream.taken.positions.data() + at, stream.taken.values.data() + at * elem_size_,
                entry->bytes));
          } else {
            whole_values();
            const TakenBlocks taken{firsts, std::span<const uint32_t>(stream.nonzeros.data() + ss.sent, n),
                                    stream.taken.positions.data(), stream.taken.values.data()};
            OMNIB_RETURN_IF_ERROR(pack_sparse_partly_taken(entry->encoding, batch, layout_, elem_size_,
                                                           shape.nonzeros, taken, values_iov_, entry->bytes));
          }
        }
        entry->encoded = true;
      }
      encoding = entry->encoding;
      payload = &entry->bytes;
    }
    if (encoding == BlockEncoding::kBlocks) whole_values();
    header = BatchHeader{static_cast<uint32_t>(n), static_cast<uint32_t>(encoding), next};
    batch_iovecs(header, batch, values_iov_, payload, send_iov_);
    trace::Span send("send batch", trace::Kind::kSend, {.peer = shard_rank(s), .shard = s, .blocks = n});
    send.set_bytes_of(send_iov_);
    auto posted = link.post(wire::FrameType::kBlocks, direct() ? kDirectTag : 0, seq_, send_iov_);
    if (!posted.is_ok()) return posted.status();
    if (!posted.value()) {  // the link's window is full
      send.cancel();
      continue;
    }
    ss.last_ticket = *posted.value();
    ss.sent += n;
    ss.ended = next == kEndOfStream;
    moved = true;
  }
  if (all_ended) {
    send_phase_ = SendPhase::kDraining;
    return drain_sends(moved);
  }
  if (direct() && in_place_) {
    uint64_t from = kEndOfStream;
    for (const SendShard& ss : send_shards_) from = std::min(from, ss.unsent_from);
    if (from != unsent_from_.load(std::memory_order_relaxed)) {
      unsent_from_.store(from, std::memory_order_release);
      aggregate_waker_.notify();
    }
  }
  if (!complete) {
    trace::Span scan("scan", trace::Kind::kCompute);
    const uint64_t to = std::min<uint64_t>(blocks, scanned_ + cut_.piece_blocks);
    found_scratch_.clear();
    nonzeros_scratch_.clear();
    taken_scratch_.clear();
    // Batches that may go sparse need counts, and are packed from the
    // elements the scan takes where it can.
    const bool count = encoding_ != EncodingPolicy::kBlocks;
    if (count)
      OMNIB_RETURN_IF_ERROR(io_->find_taking(scanned_, to, found_scratch_, nonzeros_scratch_, taken_scratch_));
    else
      OMNIB_RETURN_IF_ERROR(io_->find(scanned_, to, options_.dense, found_scratch_, nullptr));
    // Each run of found blocks one shard owns goes to its stream in one piece.
    const size_t found = found_scratch_.size();
    for (size_t k = 0, end = 0; k < found; k = end) {
      SendShard& owner = send_shards_[static_cast<size_t>(map_.owner(found_scratch_[k]))];
      const uint64_t until = map_.run_end(found_scratch_[k]);
      for (end = k + 1; end < found && found_scratch_[end] < until;) ++end;
      const auto from = static_cast<std::ptrdiff_t>(k), to = static_cast<std::ptrdiff_t>(end);
      owner.found.insert(owner.found.end(), found_scratch_.begin() + from, found_scratch_.begin() + to);
      if (!count) continue;
      owner.nonzeros.insert(owner.nonzeros.end(), nonzeros_scratch_.begin() + from, nonzeros_scratch_.begin() + to);
      owner.taken.append_blocks(taken_scratch_, k, end, nonzeros_scratch_.data(), elem_size_);
    }
    scan.set_blocks(found_scratch_.size());
    scanned_ = to;
    moved = true;
  }
  return Status::ok();
}

// The tensor's memory stays the caller's: every send must be finished.
Status OmniCollective::drain_sends(bool& moved) {
  for (int s = 0; s < destinations(); ++s) {
    const SendShard& ss = send_shards_[static_cast<size_t>(s)];
    if (to_shard(s).sends_done() >= ss.last_ticket) continue;
    // Health before progress: a peer that read our last batch may finish
    // and close its end before this lane looks.
    const Status health = to_shard(s).health();
    if (to_shard(s).sends_done() >= ss.last_ticket) continue;
    OMNIB_RETURN_IF_ERROR(health);
    draining_shard_ = s;
    return Status::ok();
  }
  // Every send finished: in place, the sums held for them may be stored
  // (elsewhere nothing waits on this, and a woken lane would find nothing).
  if (direct() && in_place_) {
    unsent_from_.store(kEndOfStream, std::memory_order_release);
    aggregate_waker_.notify();
  }
  send_phase_ = SendPhase::kSent;
  moved = true;
  return Status::ok();
}

std::string OmniCollective::send_stall_message() const {
  if (send_phase_ == SendPhase::kDraining)
    return "the last batches to shard " + std::to_string(draining_shard_) + " did not leave within the timeout";
  return "no shard took a batch within the timeout (is an aggregator stuck?)";
}

void OmniCollective::cut_stream(SendShard& stream, bool complete) const {
  const std::vector<uint64_t>& found = stream.found;
  size_t begin = stream.batch_ends.empty() ? 0 : stream.batch_ends.back();
  // Blocks below group_end share the group of the block before k.
  uint64_t group_end = stream.cut_to > 0 ? cut_.group_end(found[stream.cut_to - 1]) : 0;
  for (; stream.cut_to < found.size(); ++stream.cut_to) {
    const size_t k = stream.cut_to;
    if (k > begin && cut_.starts_new_after(stream.cut_weight, found[k] < group_end)) {
      stream.batch_ends.push_back(k);
      begin = k;
      stream.cut_weight = 0;
    }
    if (found[k] >= group_end) group_end = cut_.group_end(found[k]);
    stream.cut_weight += BatchCut::block_weight(encoding_, layout_.block_length(found[k]),
                                                stream.nonzeros.empty() ? 0 : stream.nonzeros[k], elem_size_);
  }
  if (complete && found.size() > begin) stream.batch_ends.push_back(found.size());
}

void OmniCollective::publish_sent(SendShard& ss, Connection& link) {
  const uint64_t done = link.sends_done();
  for (; ss.acked < done; ++ss.acked) ss.unsent_from = ss.headers[(ss.acked + 1) % ss.headers.size()].next;
}

// Worker side: the reduced blocks of every shard, written into the output
// as they arrive.
Status OmniCollective::receive_all() {
  trace::name_thread("receive from shards");
  OMNIB_RETURN_IF_ERROR(io_->begin_receive());
  std::vector<char> ended(static_cast<size_t>(map_.shards()), 0);
  int remaining = map_.shards();
  Stall stall(timeout_);
  while (remaining > 0) {
    const uint64_t mark = receive_waker_.mark();
    bool moved = false;
    for (int s = 0; s < map_.shards(); ++s) {
      if (ended[static_cast<size_t>(s)]) continue;
      Frame& frame = result_frames_[static_cast<size_t>(s)];
      Connection& link = to_shard(s);
      while (true) {
        auto got = link.try_recv(frame);
        if (!got.is_ok()) return got.status();
        if (!got.value()) break;
        moved = true;
        const int64_t arrived = trace::now_ns();  // a point: the frame is whole
        trace::record("recv result", trace::Kind::kRecv, arrived, arrived,
                      {.peer = shard_rank(s), .shard = s, .bytes = frame.payload.size()});
        trace::Span scatter("scatter", trace::Kind::kCompute, {.shard = s});
        OMNIB_RETURN_IF_ERROR(expect_frame(frame, wire::FrameType::kResult, seq_, link.peer_rank()));
        OMNIB_RETURN_IF_ERROR(decode_batch(frame.payload, layout_, elem_size_, map_, s, result_view_));
        traffic_.results += sizeof(wire::FrameHeader) + frame.payload.size();
        if (result_view_.next == kEndOfStream) traffic_.inputs += frame.header.tag;  // the shard's inputs
        scatter.set_blocks(result_view_.count);
        OMNIB_RETURN_IF_ERROR(io_->store(s, result_view_));
        if (result_view_.next == kEndOfStream) {
          OMNIB_RETURN_IF_ERROR(io_->finish_receive(s));
          ended[static_cast<size_t>(s)] = 1;
          --remaining;
          break;
        }
      }
    }
    if (moved) {
      stall.moved();
      continue;
    }
    if (remaining == 0) break;
    trace::Span wait("wait result", trace::Kind::kWait);
    if (!receive_waker_.wait_since(mark, stall.deadline()) && stall.expired())
      return timeout_error("no result arrived from " + std::to_string(remaining) +
                           " shard(s) within the timeout (is an aggregator or a worker stuck?)");
  }
  return Status::ok();
}

// Shard side: take batches from every worker (at most a window each, so a
// shard's memory is bounded whatever the tensor), reduce each block once
// every worker that holds it has delivered it, and stream the sums to every
// worker in order. A result batch stays in its slot until every worker's
// link has sent it.
Status OmniCollective::aggregate() {
  const int shard = my_shard();
  trace::name_thread("aggregate shard", shard);
  const int workers = job_.nodes;
  result_slots_.resize(to_workers_.send_frames + 1);
  for (auto& slot : result_slots_) {
    slot.tickets.assign(static_cast<size_t>(workers), 0);
    slot.busy = false;
  }
  const uint64_t slots = result_slots_.size();
  std::vector<char> input_ended(static_cast<size_t>(workers), 0);
  std::vector<uint64_t> next_post(static_cast<size_t>(workers), 0);  // batch number each worker gets next
  uint64_t produced = 0;  // result batches made
  uint64_t retired = 0;   // batches whose slot is free again
  bool finished = false;  // the batch announcing the end is made
  Stall stall(timeout_);

  auto slot_of = [&](uint64_t k) -> ResultSlot& { return result_slots_[k % slots]; };
  while (true) {
    const uint64_t mark = aggregate_waker_.mark();
    bool moved = false;
    OMNIB_RETURN_IF_ERROR(take_inputs(shard, input_ended, moved));
    // Reduce into a free slot.
    if (!finished && produced - retired < slots) {
      ResultSlot& slot = slot_of(produced);
      trace::Span reduce("reduce", trace::Kind::kCompute, {.shard = shard});
      int waiting_on = -1;
      const auto progress =
          aggregator_->advance(slot.batch, ResultLimit{cut_.result_blocks, cut_.result_weight, encoding_}, &waiting_on);
      reduce.set_blocks(slot.batch.indices.size());
      reduce.end();
      if (progress != ShardAggregator::Progress::kNeedInput) {
        // The batch that announces the end is the stream's last, even when
        // it was flushed full (then advance() reports kDone only next time).
        const uint64_t next = aggregator_->global_next();
        slot.header = BatchHeader{static_cast<uint32_t>(slot.batch.indices.size()), 0, next};
        OMNIB_RETURN_IF_ERROR(encode_result(slot));
        slot.busy = true;
        ++produced;
        finished = next == kEndOfStream;
        moved = true;
      }
    }
    // Send made batches to every worker, each worker's in order.
    for (int i = 0; i < workers; ++i) {
      const int w = (shard + i) % workers;  // shards start on different workers
      Connection& link = from_worker(w);
      uint64_t& k = next_post[static_cast<size_t>(w)];
      while (k < produced) {
        ResultSlot& slot = slot_of(k);
        const iovec values{slot.batch.values.data(), slot.batch.values.size()};
        batch_iovecs(slot.header, slot.batch.indices, std::span<const iovec>(&values, values.iov_len ? 1 : 0),
                     &slot.packed, result_iov_);
        trace::Span send("send result", trace::Kind::kSend,
                         {.peer = w, .shard = shard, .blocks = slot.batch.indices.size()});
        send.set_bytes_of(result_iov_);
        // The last result frame tells every worker what the shard received (route_choice.h).
        const uint32_t tag = slot.header.next == kEndOfStream ? traffic_tag(shard_inputs_) : 0;
        auto posted = link.post(wire::FrameType::kResult, tag, seq_, result_iov_);
        if (!posted.is_ok()) return posted.status();
        if (!posted.value()) {  // this worker's link is full; the others go on
          send.cancel();
          break;
        }
        slot.tickets[static_cast<size_t>(w)] = *posted.value();
        ++k;
        moved = true;
      }
    }
    // Free the slots every worker has been sent.
    while (retired < produced) {
      ResultSlot& slot = slot_of(retired);
      bool done = true;
      for (int w = 0; w < workers && done; ++w)
        done = next_post[static_cast<size_t>(w)] > retired &&
               from_worker(w).sends_done() >= slot.tickets[static_cast<size_t>(w)];
      if (!done) break;
      slot.batch.clear();
      slot.busy = false;
      ++retired;
      moved = true;
    }
    if (finished && retired == produced) return Status::ok();
    if (moved) {
      stall.moved();
      continue;
    }
    // Only a link this shard still needs can fail it: a worker that has
    // sent its stream and been sent every result may finish and close its
    // end while other workers are still being served.
    for (int w = 0; w < workers; ++w) {
      const Status health = from_worker(w).health();
      const uint64_t posted = next_post[static_cast<size_t>(w)];
      const bool owed = !input_ended[static_cast<size_t>(w)] || !finished || posted < produced ||
                        (posted > 0 && from_worker(w).sends_done() < slot_of(posted - 1).tickets[static_cast<size_t>(w)]);
      if (owed) OMNIB_RETURN_IF_ERROR(health);
    }
    trace::Span wait("wait block", trace::Kind::kWait, {.shard = shard});
    if (!aggregate_waker_.wait_since(mark, stall.deadline()) && stall.expired())
      return timeout_error("shard " + std::to_string(shard) +
                           " made no progress within the timeout (a worker stopped sending or reading?)");
  }
}

Status OmniCollective::take_inputs(int stream, std::vector<char>& input_ended, bool& moved) {
  const size_t pull = to_shards_.recv_frames;
  const uint32_t tag = direct() ? kDirectTag : 0;
  for (int w = 0; w < job_.nodes; ++w) {
    Connection& link = from_worker(w);
    while (!input_ended[static_cast<size_t>(w)] && aggregator_->queued(w) < pull) {
      Frame frame = aggregator_->take_spare_frame();
      auto got = link.try_recv(frame);
      if (!got.is_ok()) return got.status();
      if (!got.value()) {
        aggregator_->give_spare_frame(std::move(frame));
        break;
      }
      moved = true;
      const int64_t arrived = trace::now_ns();  // a point: the frame is whole
      trace::record("recv batch", trace::Kind::kRecv, arrived, arrived,
                    {.peer = w, .shard = my_shard(), .bytes = frame.payload.size()});
      OMNIB_RETURN_IF_ERROR(expect_frame(frame, wire::FrameType::kBlocks, seq_, w));
      if (frame.header.tag != tag)
        return unavailable_error("rank " + std::to_string(w) + " sent its blocks on the " +
                                 (tag ? "shards" : "direct") + " route, this rank takes the " +
                                 route_policy_name(route_) + " route (ranks disagree on the route)");
      const uint64_t bytes = sizeof(wire::FrameHeader) + frame.payload.size();
      (direct() ? traffic_.inputs : shard_inputs_) += bytes;
      BatchView view = aggregator_->take_spare_view();
      OMNIB_RETURN_IF_ERROR(decode_batch(frame.payload, layout_, elem_size_, map_, stream, view));
      input_ended[static_cast<size_t>(w)] = view.next == kEndOfStream;
      OMNIB_RETURN_IF_ERROR(aggregator_->push(w, std::move(frame), std::move(view)));
    }
  }
  return Status::ok();
}

void OmniCollective::batch_iovecs(const BatchHeader& header, std::span<const uint64_t> blocks,
                                  std::span<const iovec> values, const UninitBytes* packed,
                                  std::vector<iovec>& out) const {
  batch_prefix_iovecs(header, blocks, out);
  if (header.encoding == static_cast<uint32_t>(BlockEncoding::kBlocks))
    out.insert(out.end(), values.begin(), values.end());
  else if (packed != nullptr && !packed->empty())
    out.push_back({const_cast<uint8_t*>(packed->data()), packed->size()});
}

Status OmniCollective::encode_result(ResultSlot& slot) {
  if (encoding_ == EncodingPolicy::kBlocks || slot.batch.indices.empty()) return Status::ok();
  trace::Span pack("pack", trace::Kind::kCompute, {.blocks = slot.batch.indices.size()});
  const BatchShape shape = result_shape(slot.batch);
  const BlockEncoding encoding = choose_encoding(encoding_, shape, elem_size_);
  slot.header.encoding = static_cast<uint32_t>(encoding);
  if (encoding == BlockEncoding::kBlocks) return Status::ok();
  const iovec values{slot.batch.values.data(), slot.batch.values.size()};
  return pack_sparse(encoding, slot.batch.indices, layout_, elem_size_, shape.nonzeros,
                     std::span<const iovec>(&values, 1), slot.packed);
}

BatchShape OmniCollective::result_shape(const ResultBatch& batch, const uint8_t* sums_at, bool estimate) const {
  // The sums are in cache: count their non-zeros (a sum can cancel to zero).
  BatchShape shape;
  const uint8_t* at = batch.values.data();
  const bool count = encoding_ != EncodingPolicy::kBlocks;
  for (size_t i = 0; i < batch.indices.size(); ++i) {
    const uint64_t b = batch.indices[i];
    const size_t len = layout_.block_length(b);
    if (sums_at != nullptr) at = sums_at + layout_.block_begin(b) * elem_size_;
    uint64_t nonzeros = 0;
    if (!batch.nonzeros.empty())
      nonzeros = batch.nonzeros[i];  // counted as it was summed
    else if (count)
      nonzeros = estimate && batch.estimated_counts[i] != ResultBatch::kUncounted
                     ? batch.estimated_counts[i]
                     : count_nonzero(at, len, elem_size_);
    shape.add_block(layout_.block_begin(b), len, nonzeros);
    at += len * elem_size_;
  }
  return shape;
}

std::optional<std::string> OmniCollective::unavailable_reason(const CollectiveSetup& setup) {
  if (setup.device == DeviceKind::kCuda && device_block_io_factory() == nullptr)
    return "this build has no CUDA kernels for device tensors";
  return std::nullopt;
}

namespace {
const CollectiveRegistration kOmni(CollectiveInfo{
    "omni",
    "block-sparse streaming aggregation (OmniReduce): only non-zero blocks cross the wire",
    true,
    OmniCollective::unavailable_reason,
    [](const CollectiveSetup& s) { return OmniCollective::create(s, OmniOptions{}); },
    [](const CostInputs& c) { return omni_analytic_cost(c, false); },
    true,
});
}  // namespace

}  // namespace omnib
