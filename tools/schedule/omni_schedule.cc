#include "tools/schedule/omni_schedule.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

#include "engine/omni/omni_cost.h"
#include "engine/omni/omni_cost_parts.h"
#include "tools/schedule/link_order.h"

namespace omnib {
namespace {

constexpr uint32_t kInMemory = std::numeric_limits<uint32_t>::max();

// One input batch of a stream: its message (kInMemory: a worker's batch to
// its own shard), its blocks and bytes.
struct InputRef {
  uint32_t id = kInMemory;
  uint64_t first = 1, last = 0;  // first > last: empty (only ends the stream)
  double bytes = 0;
  bool empty() const { return first > last; }
};

class OmniScheduleBuilder final : public BatchVisitor {
 public:
  OmniScheduleBuilder(const ScheduleInputs& in, bool dense, const OmniPlan& plan)
      : in_(in),
        c_(in.cost),
        plan_(plan),
        workers_(c_.nodes),
        shards_(plan.direct ? 1 : plan.shards),
        schedule_(c_.aggregators > 0 && !plan.direct ? c_.nodes + c_.aggregators : c_.nodes),
        cut_(batch_cut(c_, plan.shards, dense ? EncodingPolicy::kBlocks : c_.omni.encoding, plan.direct)),
        window_(tune_streams(c_.omni.link_rate_bps, c_.nodes, 1, receive_budget_bytes(c_.omni.link_rate_bps)).send_frames),
        pace_(in.flows.paces(schedule_.ranks(), plan.direct ? c_.nodes - 1 : std::max(shards_, c_.nodes) - 1)),
        streams_(static_cast<size_t>(workers_) * static_cast<size_t>(shards_)) {
    if (pace_)
      schedule_.add_note("each rank's batches to its peers sent one after another (paced at line rate, rotated), "
                         "not all streams at once");
  }

  void input_batch(int worker, int shard, double bytes, uint64_t first, uint64_t last) override {
    if (worker != pending_worker_) flush_worker();
    pending_worker_ = worker;
    pending_.push_back({shard, {kInMemory, first, last, bytes}});
  }

  void result_batch(int shard, double bytes, uint64_t first, uint64_t last) override {
    flush_worker();
    if (plan_.direct) return;  // nobody sends results on the direct route
    if (shard != result_shard_) start_results(shard);
    emit_result(shard, bytes, first, last);
  }

  MessageSchedule finish() {
    flush_worker();
    send_results();
    if (merged_results_ > 0)
      schedule_.add_note(std::to_string(merged_results_) +
                         " result batches merged into the one before (ready at the same moment, back to back on "
                         "every stream)");
    if (held_results_ > 0)
      schedule_.add_note(std::to_string(held_results_) +
                         " result batches held back to leave with their shard's last (one message per shard and "
                         "worker: an upper bound on the time)");
    return std::move(schedule_);
  }

 private:
  int shard_rank(int s) const { return c_.aggregators > 0 ? c_.nodes + s : s; }
  std::vector<InputRef>& stream(int w, int s) {
    return streams_[static_cast<size_t>(w) * static_cast<size_t>(shards_) + static_cast<size_t>(s)];
  }

  // The local steps of worker w's scan, one per scan group a batch ends in:
  // a batch leaves once the scan has passed the group of its last block.
  std::optional<uint32_t> scan_step(int w, uint64_t last_block, bool empty) {
    if (in_.rates.scan_s_per_byte <= 0) return std::nullopt;
    const uint64_t blocks = BlockLayout(c_.count, c_.omni.block_size).num_blocks();
    const uint64_t end = empty ? blocks : std::min(blocks, cut_.group_end(last_block));
    while (scanned_to_ < end) {
      const uint64_t next = std::min(blocks, cut_.group_end(scanned_to_));
      const double bytes = static_cast<double>((next - scanned_to_) * c_.omni.block_size * c_.elem_size);
      std::vector<MessageDep> deps;
      if (scan_) deps.push_back({*scan_, false});
      scan_ = schedule_.join(w, deps, in_.rates.scan_s_per_byte * bytes);
      scanned_to_ = next;
    }
    return scan_;
  }

  // Worker w's batches, now that the walk has closed them all.
  void flush_worker() {
    if (pending_worker_ < 0) return;
    const int w = pending_worker_;
    scan_.reset();
    scanned_to_ = 0;
    for (auto& [s, ref] : pending_) stream(w, s).push_back(ref);
    pending_.clear();
    pending_worker_ = -1;
    PacedFanOut fan_out(pace_, in_.flows.paced_lanes);
    std::vector<MessageDep> deps;
    const int peers = plan_.direct ? workers_ - 1 : shards_;
    for (int k = 0; k < peers; ++k) {
      // Direct: the one stream to every other worker; shards: each shard's
      // stream, from the one after the worker's own.
      const int s = plan_.direct ? 0 : (w + 1 + k) % shards_;
      const int dst = plan_.direct ? rotated_peer(w, workers_, k) : shard_rank(s);
      std::vector<InputRef>& batches = stream(w, s);
      if (dst == w) continue;  // its own shard's batches stay in memory
      for (size_t i = 0; i < batches.size(); ++i) {
        deps.clear();
        if (auto scan = scan_step(w, batches[i].last, batches[i].empty())) deps.push_back({*scan, false});
        if (i >= window_) deps.push_back({sent_ids_[i - window_], false});
        fan_out.deps_for_next(deps);
        const uint32_t id = schedule_.add(w, dst, static_cast<uint64_t>(batches[i].bytes), deps);
        if (i == 0) sent_ids_.clear();
        sent_ids_.push_back(id);
        if (!plan_.direct) batches[i].id = id;
        fan_out.sent(id);
      }
    }
  }

  void start_results(int shard) {
    send_results();
    result_shard_ = shard;
    depended_.assign(static_cast<size_t>(workers_), -1);
    last_join_.reset();
    result_links_.assign(static_cast<size_t>(schedule_.ranks()), LinkWindow(window_));
    result_fan_out_ = PacedFanOut(pace_, in_.flows.paced_lanes);
  }

  // A result batch of `shard`: the join of what it waits for, then a
  // message to every worker.
  void emit_result(int shard, double bytes, uint64_t first, uint64_t last) {
    const int sr = shard_rank(shard);
    const uint64_t upto = first > last ? std::numeric_limits<uint64_t>::max() : last;
    std::vector<MessageDep> deps;
    if (last_join_) deps.push_back({*last_join_, false});
    double reduced = 0;
    for (int w = 0; w < workers_; ++w) {
      const std::vector<InputRef>& batches = stream(w, shard);
      int& at = depended_[static_cast<size_t>(w)];
      int p = std::max(at, 0);
      while (p + 1 < static_cast<int>(batches.size()) && (batches[static_cast<size_t>(p + 1)].empty()
                                                              ? upto == std::numeric_limits<uint64_t>::max()
                                                              : batches[static_cast<size_t>(p + 1)].first <= upto))
        ++p;
      if (p == at) continue;
      for (int q = at + 1; q <= p; ++q) reduced += batches[static_cast<size_t>(q)].bytes;
      at = p;
      const uint32_t id = batches[static_cast<size_t>(p)].id;
      if (id != kInMemory) deps.push_back({id, false});
    }
    // Ready at the same moment as the batch before (nothing more to wait
    // for, nothing to add): it follows that one back to back on every
    // stream, which a flow model cannot tell from one message of both.
    const bool nothing_new = deps.size() == (last_join_ ? 1u : 0u) && reduced == 0;
    if (nothing_new && pending_result_) {
      pending_result_->bytes += bytes;
      ++merged_results_;
      return;
    }
    // Paced (hundreds of workers), a shard's result batches go as one
    // message per worker once the last of them is ready: the earlier ones
    // leave later than the engine sends them (the time is an upper bound),
    // and the flows per shard and worker fall from up to one per block to one.
    if (pace_ && pending_result_) {
      const uint32_t ready = schedule_.join(sr, deps, in_.rates.reduce_s_per_byte * reduced);
      last_join_ = ready;
      pending_result_->ready = ready;
      pending_result_->bytes += bytes;
      ++held_results_;
      return;
    }
    send_results();
    const uint32_t ready = schedule_.join(sr, deps, in_.rates.reduce_s_per_byte * reduced);
    last_join_ = ready;
    pending_result_ = PendingResult{sr, ready, bytes};
  }

  // The result batch (or merged batches) held back: to every worker.
  void send_results() {
    if (!pending_result_) return;
    const PendingResult r = *pending_result_;
    pending_result_.reset();
    std::vector<MessageDep> deps;
    for (int k = 0; k < schedule_.ranks() - 1; ++k) {
      const int w = rotated_peer(r.shard_rank, schedule_.ranks(), k);
      if (w >= workers_) continue;  // dedicated aggregators get no results
      deps.assign({{r.ready, false}});
      LinkWindow& link = result_links_[static_cast<size_t>(w)];
      link.deps_for_next(deps);
      result_fan_out_.deps_for_next(deps);
      const uint32_t id = schedule_.add(r.shard_rank, w, static_cast<uint64_t>(r.bytes), deps);
      link.sent(id);
      result_fan_out_.sent(id);
    }
  }

  const ScheduleInputs& in_;
  const CostInputs& c_;
  const OmniPlan plan_;
  const int workers_;
  const int shards_;
  MessageSchedule schedule_;
  const BatchCut cut_;
  const size_t window_;
  const bool pace_;
  // Per worker and shard: its batches, in order.
  std::vector<std::vector<InputRef>> streams_;
  // The worker whose batches the walk is closing, and those batches.
  int pending_worker_ = -1;
  std::vector<std::pair<int, InputRef>> pending_;
  // The scan of the worker being flushed.
  std::optional<uint32_t> scan_;
  uint64_t scanned_to_ = 0;
  // The current stream's messages, for its window.
  std::vector<uint32_t> sent_ids_;
  // The shard whose results are being emitted: per worker the last batch
  // a result waited for, the last result's join, each worker's link.
  int result_shard_ = -1;
  std::vector<int> depended_;
  std::optional<uint32_t> last_join_;
  std::vector<LinkWindow> result_links_;
  PacedFanOut result_fan_out_{false, 1};  // every result batch of the shard, one fan-out when paced
  // The shard's last result batch, not yet sent: the next may join it.
  struct PendingResult {
    int shard_rank;
    uint32_t ready;
    double bytes;
  };
  std::optional<PendingResult> pending_result_;
  uint64_t merged_results_ = 0;
  uint64_t held_results_ = 0;  // merged although ready later (paced only)
};

}  // namespace

MessageSchedule omni_schedule(const ScheduleInputs& in, bool dense) {
  const OmniPlan plan = omni_plan(in.cost, dense);
  if (!plan.exact) throw std::invalid_argument("omni schedule: needs every rank's non-zeros");
  OmniScheduleBuilder builder(in, dense, plan);
  if (in.cost.nodes > 1 || in.cost.aggregators > 0)
    exact_cost(in.cost, dense, plan.shards, plan.direct, &builder);
  MessageSchedule s = builder.finish();
  // The engine budgets a receiver's in-flight bytes at a few milliseconds of
  // its link when it knows the rate (stream_tuning.h); without a rate it
  // sets none and the transport's 16-frame windows stand, which a port's
  // buffer need not hold: unbudgeted.
  s.set_flows_budgeted(in.cost.omni.link_rate_bps > 0);
  return s;
}

}  // namespace omnib
