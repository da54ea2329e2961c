#include "engine/omni/worker_sender.h"

#include <algorithm>

#include "engine/lanes/link_lane.h"
#include "engine/omni/batch_encoding.h"
#include "engine/trace/trace.h"

namespace omnib {

// A batch on its way to one destination.
struct WorkerSender::Batch {
  std::span<const uint64_t> blocks;
  size_t first = 0;          // its first block's place in the stream's `found`
  uint64_t k = 0;            // its number in the stream
  bool have_values = false;  // values_iov_ holds the blocks' whole values
  BlockEncoding encoding = BlockEncoding::kBlocks;
  const UninitBytes* payload = nullptr;  // the packed payload, unless whole blocks
};

WorkerSender::WorkerSender(OmniPeers& peers, WorkerBlockIo& io, Waker& in_place_waker,
                           std::chrono::milliseconds timeout)
    : peers_(peers), io_(io), in_place_waker_(in_place_waker), timeout_(timeout) {
  streams_.resize(static_cast<size_t>(peers.shards()));
}

Status WorkerSender::run(Waker& waker) {
  trace::name_thread("send to shards");
  auto step = [this]() -> Result<LaneStep> {
    LaneStep s;
    s.waiting_for = "wait window";
    OMNIB_RETURN_IF_ERROR(round(s.moved));
    s.done = sent();
    return s;
  };
  return run_link_lane(waker, timeout_, nullptr, step, [this] { return stall_message(); });
}

void WorkerSender::begin(const OmniCall& call) {
  call_ = &call;
  for (int s = 0; s < call.destinations; ++s) stream(s).begin(call, s, peers_.to_shard(s).sends_done());
  scanned_ = 0;
  phase_ = Phase::kStreaming;
  unsent_from_.store(call.direct && call.in_place ? 0 : kEndOfStream, std::memory_order_relaxed);
}

// One pass: while streaming, the batches every destination has room for,
// then the next piece of the scan; once every stream has ended, whether the
// last sends have finished.
Status WorkerSender::round(bool& moved) {
  if (phase_ == Phase::kDraining) return drain(moved);
  const uint64_t finished_by_all = publish_acks();
  bool all_ended = true;
  OMNIB_RETURN_IF_ERROR(post_batches(finished_by_all, all_ended, moved));
  if (all_ended) {
    phase_ = Phase::kDraining;
    return drain(moved);
  }
  if (call_->direct && call_->in_place) publish_unsent_from();
  if (scanned_ < call_->layout.num_blocks()) return scan_next_piece(moved);
  return Status::ok();
}

uint64_t WorkerSender::publish_acks() {
  uint64_t finished_by_all = ~uint64_t{0};
  for (int s = 0; s < call_->destinations; ++s) {
    Stream& ss = stream(s);
    const uint64_t done = peers_.to_shard(s).sends_done();
    for (; ss.acked < done; ++ss.acked) ss.unsent_from = ss.headers[(ss.acked + 1) % ss.headers.size()].next;
    finished_by_all = std::min(finished_by_all, ss.batches_finished());
  }
  return finished_by_all;
}

Status WorkerSender::post_batches(uint64_t finished_by_all, bool& all_ended, bool& moved) {
  const int destinations = call_->destinations;
  for (int i = 0; i < destinations; ++i) {
    const int s = (peers_.job().rank + i) % destinations;  // ranks start on different shards
    if (stream(s).ended) continue;
    all_ended = false;
    bool posted = false;
    OMNIB_RETURN_IF_ERROR(post_batch(s, finished_by_all, posted));
    moved |= posted;
  }
  return Status::ok();
}

Status WorkerSender::post_batch(int dest, uint64_t finished_by_all, bool& posted) {
  Stream& ss = stream(dest);
  Stream& from = stream(call_->stream_of(dest));
  // This destination's next batch, once the stream's cut reached it (an
  // empty stream ends with a batch of no blocks).
  const bool complete = scanned_ == call_->layout.num_blocks();
  from.cut(*call_, complete);
  Batch batch;
  batch.k = ss.batches_posted();
  batch.first = ss.sent;
  size_t n = 0;
  if (batch.k < from.batch_ends.size())
    n = from.batch_ends[batch.k] - ss.sent;
  else if (!(complete && ss.sent == from.found.size()))
    return Status::ok();
  // No room: build nothing yet. (Counted from `acked`, so no header slot is
  // reused before publish_acks has read it.)
  Connection& link = peers_.to_shard(dest);
  if (ss.last_ticket - ss.acked >= link.send_window()) return Status::ok();
  batch.blocks = std::span<const uint64_t>(from.found.data() + ss.sent, n);
  const uint64_t next = ss.sent + n < from.found.size() ? from.found[ss.sent + n] : kEndOfStream;
  values_iov_.clear();
  if (call_->encoding != EncodingPolicy::kBlocks) {
    // On the shards route a stream has one destination: this one.
    const uint64_t finished = call_->direct ? finished_by_all : ss.batches_finished();
    auto ready = encode_batch(from, batch, finished, dest);
    if (!ready.is_ok()) return ready.status();
    if (!ready.value())
      return Status::ok();  // a slower destination still sends what held its
                            // slot
  }
  if (batch.encoding == BlockEncoding::kBlocks) whole_values(batch);
  BatchHeader& header = ss.headers[(ss.last_ticket + 1) % ss.headers.size()];
  header = BatchHeader{static_cast<uint32_t>(n), static_cast<uint32_t>(batch.encoding), next};
  batch_iovecs(header, batch.blocks, values_iov_, batch.payload, send_iov_);
  trace::Span send("send batch", trace::Kind::kSend, {.peer = peers_.shard_rank(dest), .shard = dest, .blocks = n});
  send.set_bytes_of(send_iov_);
  auto ticket = link.post(wire::FrameType::kBlocks, call_->blocks_tag(), call_->seq, send_iov_);
  if (!ticket.is_ok()) return ticket.status();
  if (!ticket.value()) {  // the link's window is full
    send.cancel();
    return Status::ok();
  }
  ss.last_ticket = *ticket.value();
  ss.sent += n;
  ss.ended = next == kEndOfStream;
  posted = true;
  return Status::ok();
}

Result<bool> WorkerSender::encode_batch(Stream& from, Batch& batch, uint64_t finished, int dest) {
  PackedBatches::Entry* entry = from.packed.get(batch.k, finished);
  if (entry == nullptr) return false;
  const size_t n = batch.blocks.size();
  const std::span<const uint32_t> counts(from.nonzeros.data() + batch.first, n);
  if (!entry->encoded) {
    BatchShape shape;
    for (size_t i = 0; i < n; ++i)
      shape.add_block(call_->layout.block_begin(batch.blocks[i]), call_->layout.block_length(batch.blocks[i]),
                      counts[i]);
    entry->encoding = choose_encoding(call_->encoding, shape, call_->elem_size);
    if (entry->encoding != BlockEncoding::kBlocks) {
      trace::Span pack("pack", trace::Kind::kCompute, {.shard = dest, .blocks = n});
      const std::span<const uint64_t> firsts(from.taken.first.data() + batch.first, n);
      if (std::find(firsts.begin(), firsts.end(), FoundElements::kNotTaken) == firsts.end()) {
        const uint64_t at = n > 0 ? firsts[0] : 0;
        OMNIB_RETURN_IF_ERROR(pack_sparse_taken(entry->encoding, batch.blocks, counts, call_->layout, call_->elem_size,
                                                from.taken.positions.data() + at,
                                                from.taken.values.data() + at * call_->elem_size, entry->bytes));
      } else {
        whole_values(batch);
        const TakenBlocks taken{firsts, counts, from.taken.positions.data(), from.taken.values.data()};
        OMNIB_RETURN_IF_ERROR(pack_sparse_partly_taken(entry->encoding, batch.blocks, call_->layout, call_->elem_size,
                                                       shape.nonzeros, taken, values_iov_, entry->bytes));
      }
    }
    entry->encoded = true;
  }
  batch.encoding = entry->encoding;
  batch.payload = &entry->bytes;
  return true;
}

void WorkerSender::whole_values(Batch& batch) {
  if (!batch.have_values) io_.value_iovecs(batch.blocks, values_iov_);
  batch.have_values = true;
}

void WorkerSender::publish_unsent_from() {
  uint64_t from = kEndOfStream;
  for (const Stream& ss : streams_) from = std::min(from, ss.unsent_from);
  if (from == unsent_from_.load(std::memory_order_relaxed)) return;
  unsent_from_.store(from, std::memory_order_release);
  in_place_waker_.notify();
}

Status WorkerSender::scan_next_piece(bool& moved) {
  trace::Span scan("scan", trace::Kind::kCompute);
  const uint64_t to = std::min<uint64_t>(call_->layout.num_blocks(), scanned_ + call_->cut.piece_blocks);
  found_scratch_.clear();
  nonzeros_scratch_.clear();
  taken_scratch_.clear();
  // Batches that may go sparse need counts, and are packed from the
  // elements the scan takes where it can.
  const bool count = call_->encoding != EncodingPolicy::kBlocks;
  if (count)
    OMNIB_RETURN_IF_ERROR(io_.find_taking(scanned_, to, found_scratch_, nonzeros_scratch_, taken_scratch_));
  else
    OMNIB_RETURN_IF_ERROR(io_.find(scanned_, to, call_->dense, found_scratch_, nullptr));
  // Each run of found blocks one shard owns goes to its stream in one piece.
  const size_t found = found_scratch_.size();
  for (size_t k = 0, end = 0; k < found; k = end) {
    Stream& owner = stream(call_->map.owner(found_scratch_[k]));
    const uint64_t until = call_->map.run_end(found_scratch_[k]);
    for (end = k + 1; end < found && found_scratch_[end] < until;) ++end;
    const auto first = static_cast<std::ptrdiff_t>(k), last = static_cast<std::ptrdiff_t>(end);
    owner.found.insert(owner.found.end(), found_scratch_.begin() + first, found_scratch_.begin() + last);
    if (!count) continue;
    owner.nonzeros.insert(owner.nonzeros.end(), nonzeros_scratch_.begin() + first, nonzeros_scratch_.begin() + last);
    owner.taken.append_blocks(taken_scratch_, k, end, nonzeros_scratch_.data(), call_->elem_size);
  }
  scan.set_blocks(found);
  scanned_ = to;
  moved = true;
  return Status::ok();
}

// The tensor's memory stays the caller's: every send must be finished.
Status WorkerSender::drain(bool& moved) {
  for (int s = 0; s < call_->destinations; ++s) {
    Connection& link = peers_.to_shard(s);
    const uint64_t last = stream(s).last_ticket;
    if (link.sends_done() >= last) continue;
    // Health before progress: a peer that read our last batch may finish
    // and close its end before this lane looks.
    const Status health = link.health();
    if (link.sends_done() >= last) continue;
    OMNIB_RETURN_IF_ERROR(health);
    draining_dest_ = s;
    return Status::ok();
  }
  // Every send finished: in place, the sums held for them may be stored
  // (elsewhere nothing waits on this, and a woken lane would find nothing).
  if (call_->direct && call_->in_place) {
    unsent_from_.store(kEndOfStream, std::memory_order_release);
    in_place_waker_.notify();
  }
  phase_ = Phase::kSent;
  moved = true;
  return Status::ok();
}

std::string WorkerSender::stall_message() const {
  if (phase_ == Phase::kDraining)
    return "the last batches to shard " + std::to_string(draining_dest_) + " did not leave within the timeout";
  return "no shard took a batch within the timeout (is an aggregator stuck?)";
}

}  // namespace omnib
