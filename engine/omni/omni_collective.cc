#include "engine/omni/omni_collective.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/omni/device_block_io.h"
#include "engine/omni/host_block_io.h"
#include "engine/trace/trace.h"

namespace omnib {
namespace {

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
  auto links = setup.links->establish(specs);
  if (!links.is_ok()) return links.status().with_context("omni: ");
  return std::unique_ptr<Collective>(new OmniCollective(setup, options, links.take(), std::move(io)));
}

OmniCollective::OmniCollective(const CollectiveSetup& setup, OmniOptions options, LinkSet links,
                               std::unique_ptr<WorkerBlockIo> io)
    : job_(setup.job),
      options_(options),
      dtype_(setup.dtype),
      elem_size_(dtype_size(setup.dtype)),
      block_size_(setup.block_size),
      links_(std::move(links)),
      io_(std::move(io)),
      send_iov_(static_cast<size_t>(shards())),
      receive_scratch_(static_cast<size_t>(shards())) {
  int lanes = 0;
  if (job_.is_worker()) lanes += 2 * shards();
  if (my_shard() >= 0) {
    lanes += job_.nodes + 1;
    aggregator_ = std::make_unique<ShardAggregator>(job_.nodes, dtype_);
  }
  lanes_ = std::make_unique<LaneGroup>(lanes);
}

OmniCollective::~OmniCollective() {
  abort();
  lanes_.reset();
}

int OmniCollective::my_shard() const {
  if (job_.aggregators > 0) return job_.rank >= job_.nodes ? job_.rank - job_.nodes : -1;
  return job_.rank;
}

size_t OmniCollective::blocks_per_frame() const {
  return std::max<size_t>(1, options_.frame_bytes / (block_size_ * elem_size_));
}

void OmniCollective::abort() {
  links_.abort_all();
  std::lock_guard lock(shard_mu_);
  shard_aborted_ = true;
  window_cv_.notify_all();
  input_cv_.notify_all();
}

Status OmniCollective::allreduce(const TensorView& in, const TensorView& out) {
  if (in.count != out.count) return usage_error("omni: input and output counts differ");
  ++seq_;
  in_ = in;
  out_ = out;
  layout_ = BlockLayout(in.count, block_size_);
  if (io_) OMNIB_RETURN_IF_ERROR(io_->begin(in, out, layout_));
  if (aggregator_) aggregator_->reset(layout_, layout_.shard_range(my_shard(), shards()));

  const int worker_lanes = job_.is_worker() ? 2 * shards() : 0;
  std::function<Status(int)> body = [&](int lane) -> Status {
    if (lane < worker_lanes) {
      return lane < shards() ? send_shard(lane) : receive_shard(lane - shards());
    }
    int shard_lane = lane - worker_lanes;
    return shard_lane < job_.nodes ? read_worker(shard_lane) : aggregate();
  };
  std::function<void()> on_failure = [this] { abort(); };
  return lanes_->run(body, on_failure);  // the harness names the rank and algorithm
}

// Worker side: stream this worker's non-zero blocks of `shard` in index order.
Status OmniCollective::send_shard(int shard) {
  trace::name_thread("send to shard", shard);
  Connection& link = *links_.dialer_end[link_id(job_.rank, shard)];
  const BlockRange range = layout_.shard_range(shard, shards());
  trace::Span scan("scan", trace::Kind::kCompute, {.shard = shard});
  auto staged = io_->stage(shard, range, options_.dense);
  if (!staged.is_ok()) return staged.status();
  const std::span<const uint64_t> indices = staged.value();
  scan.set_blocks(indices.size());
  scan.end();
  const size_t per_frame = blocks_per_frame();
  std::vector<iovec>& iov = send_iov_[static_cast<size_t>(shard)];
  size_t pos = 0;
  do {
    const size_t n = std::min(per_frame, indices.size() - pos);
    BatchHeader header{static_cast<uint32_t>(n), 0,
                       pos + n < indices.size() ? indices[pos + n] : kEndOfStream};
    batch_prefix_iovecs(header, indices.subspan(pos, n), iov);
    io_->value_iovecs(shard, pos, n, iov);
    trace::Span send("send batch", trace::Kind::kSend, {.peer = shard_rank(shard), .shard = shard, .blocks = n});
    send.set_bytes_of(iov);
    OMNIB_RETURN_IF_ERROR(link.send(wire::FrameType::kBlocks, 0, seq_, iov));
    pos += n;
  } while (pos < indices.size());
  return Status::ok();
}

// Worker side: write the reduced blocks of `shard` into the output.
Status OmniCollective::receive_shard(int shard) {
  Connection& link = *links_.dialer_end[link_id(job_.rank, shard)];
  const BlockRange range = layout_.shard_range(shard, shards());
  ReceiveScratch& scratch = receive_scratch_[static_cast<size_t>(shard)];
  trace::name_thread("receive from shard", shard);
  OMNIB_RETURN_IF_ERROR(io_->begin_receive(shard, range));
  while (true) {
    trace::Span recv("recv result", trace::Kind::kRecv, {.peer = shard_rank(shard), .shard = shard});
    OMNIB_RETURN_IF_ERROR(link.recv(scratch.frame));
    recv.set_bytes(scratch.frame.payload.size());
    recv.end();
    trace::Span scatter("scatter", trace::Kind::kCompute, {.shard = shard});
    OMNIB_RETURN_IF_ERROR(expect_frame(scratch.frame, wire::FrameType::kResult, seq_, link.peer_rank()));
    OMNIB_RETURN_IF_ERROR(decode_batch(scratch.frame.payload, layout_, elem_size_, range, scratch.view));
    scatter.set_blocks(scratch.view.count);
    OMNIB_RETURN_IF_ERROR(io_->store(shard, scratch.view));
    if (scratch.view.next == kEndOfStream) return io_->finish_receive(shard, range);
  }
}

// Shard side: move batches from one worker's link into the aggregator, keeping
// at most window_frames of them buffered (TCP back-pressure does the rest).
Status OmniCollective::read_worker(int worker) {
  const int shard = my_shard();
  Connection& link = *links_.acceptor_end[link_id(worker, shard)];
  const BlockRange range = layout_.shard_range(shard, shards());
  trace::name_thread("read from worker", worker);
  while (true) {
    Frame frame;
    {
      trace::Span wait("wait window", trace::Kind::kWait, {.peer = worker, .shard = shard});
      std::unique_lock lock(shard_mu_);
      window_cv_.wait(lock, [&] { return shard_aborted_ || aggregator_->queued(worker) < options_.window_frames; });
      if (shard_aborted_) return unavailable_error("aborted");
      frame = aggregator_->take_spare_frame();
    }
    trace::Span recv("recv batch", trace::Kind::kRecv, {.peer = worker, .shard = shard});
    OMNIB_RETURN_IF_ERROR(link.recv(frame));
    recv.set_bytes(frame.payload.size());
    recv.end();
    OMNIB_RETURN_IF_ERROR(expect_frame(frame, wire::FrameType::kBlocks, seq_, worker));
    BatchView view;
    OMNIB_RETURN_IF_ERROR(decode_batch(frame.payload, layout_, elem_size_, range, view));
    const bool last = view.next == kEndOfStream;
    {
      std::lock_guard lock(shard_mu_);
      OMNIB_RETURN_IF_ERROR(aggregator_->push(worker, std::move(frame), std::move(view)));
      input_cv_.notify_one();
    }
    if (last) return Status::ok();
  }
}

// Shard side: reduce blocks as they become complete and stream the sums to
// every worker, flushing whenever the shard would otherwise wait.
Status OmniCollective::aggregate() {
  const int shard = my_shard();
  ResultBatch& batch = result_batch_;
  batch.clear();
  std::vector<iovec>& iov = result_iov_;
  const size_t per_frame = blocks_per_frame();
  trace::name_thread("aggregate shard", shard);
  auto flush = [&](uint64_t next) -> Status {
    BatchHeader header{static_cast<uint32_t>(batch.indices.size()), 0, next};
    iov.clear();
    iov.push_back({&header, sizeof(header)});
    if (!batch.indices.empty()) {
      iov.push_back({batch.indices.data(), batch.indices.size() * sizeof(uint64_t)});
      iov.push_back({batch.values.data(), batch.values.size()});
    }
    for (int w = 0; w < job_.nodes; ++w) {
      trace::Span send("send result", trace::Kind::kSend, {.peer = w, .shard = shard, .blocks = batch.indices.size()});
      send.set_bytes_of(iov);
      OMNIB_RETURN_IF_ERROR(links_.acceptor_end[link_id(w, shard)]->send(wire::FrameType::kResult, 0, seq_, iov));
    }
    batch.clear();
    return Status::ok();
  };

  while (true) {
    ShardAggregator::Progress progress;
    uint64_t next;
    int waiting_on = -1;  // advance() names the worker it waits for
    {
      std::unique_lock lock(shard_mu_);
      while (true) {
        if (shard_aborted_) return unavailable_error("aborted");
        const uint64_t consumed = aggregator_->consumed();
        trace::Span reduce("reduce", trace::Kind::kCompute, {.shard = shard});
        progress = aggregator_->advance(batch, per_frame, &waiting_on);
        reduce.end();
        if (aggregator_->consumed() != consumed) window_cv_.notify_all();  // window space freed
        // kNeedInput leaves the batch empty: what was done went out at the boundary.
        if (progress != ShardAggregator::Progress::kNeedInput) break;
        const uint64_t before = aggregator_->pushes();
        trace::Span wait("wait block", trace::Kind::kWait, {.peer = waiting_on, .shard = shard});
        input_cv_.wait(lock, [&] { return shard_aborted_ || aggregator_->pushes() != before; });
      }
      next = aggregator_->global_next();
    }
    OMNIB_RETURN_IF_ERROR(flush(next));
    // The batch that announces the end is the stream's last, even when it
    // was flushed full (then advance() would report kDone only on the next call).
    if (next == kEndOfStream) return Status::ok();
  }
}

std::optional<std::string> OmniCollective::unavailable_reason(const CollectiveSetup& setup) {
  if (setup.device == DeviceKind::kCuda && device_block_io_factory() == nullptr)
    return "this build has no CUDA kernels for device tensors";
  return std::nullopt;
}

WireCost OmniCollective::analytic_cost(const CostInputs& c, bool dense) {
  const double nb = std::ceil(static_cast<double>(c.count) / static_cast<double>(c.block_size));
  const double block_bytes = static_cast<double>(c.block_size * c.elem_size);
  const double d = dense ? 1.0 : c.block_density;
  const double u = dense ? 1.0 : c.union_block_density;
  const int shards = c.aggregators > 0 ? c.aggregators : c.nodes;
  const double per_frame = std::max(1.0, std::floor(static_cast<double>(OmniOptions{}.frame_bytes) / block_bytes));
  // A stream of k blocks costs k blocks with their indices, plus one
  // frame header and batch header per frame (at least one frame).
  auto stream = [&](double blocks) {
    double frames = std::max(1.0, std::ceil(blocks / per_frame));
    return blocks * (block_bytes + 8) + frames * (32 + 16);
  };
  const double shard_blocks = nb / shards;
  if (c.aggregators == 0) {
    const double upload = (c.nodes - 1) * stream(d * shard_blocks);
    const double download = (c.nodes - 1) * stream(u * shard_blocks);
    return {upload + download, c.nodes * (upload + download)};
  }
  const double worker_sent = shards * stream(d * shard_blocks);
  const double aggregator_sent = c.nodes * stream(u * shard_blocks);
  return {std::max(worker_sent, aggregator_sent), c.nodes * worker_sent + shards * aggregator_sent};
}

namespace {
const CollectiveRegistration kOmni(CollectiveInfo{
    "omni",
    "block-sparse streaming aggregation (OmniReduce): only non-zero blocks cross the wire",
    true,
    OmniCollective::unavailable_reason,
    [](const CollectiveSetup& s) { return OmniCollective::create(s, OmniOptions{}); },
    [](const CostInputs& c) { return OmniCollective::analytic_cost(c, false); },
    true,
});
}  // namespace

}  // namespace omnib
