// omni's bytes counted block by block the way the engine cuts its streams:
// a worker's stream to a shard into batches by BatchCut; a shard's result
// stream when a batch is full (BatchCut's result_blocks, result_weight) and
// before every block that begins a new batch of some worker holding it
// (shard_aggregator.h). Each batch in the encoding the engine picks from its
// non-zero counts. The direct route is the same count over one shard, the
// whole tensor: every worker sends its one stream to every other, and nobody
// sends results.
#include <algorithm>
#include <vector>

#include "engine/blocks/shard_map.h"
#include "engine/omni/omni_cost_parts.h"

namespace omnib {
namespace {

class ExactCount {
 public:
  ExactCount(const CostInputs& c, bool dense, int shards, bool direct, BatchVisitor* visitor)
      : c_(c),
        visitor_(visitor),
        dense_(dense),
        direct_(direct),
        shards_(direct ? 1 : shards),
        layout_(c.count, c.omni.block_size),
        policy_(dense ? EncodingPolicy::kBlocks : c.omni.encoding),
        cut_(batch_cut(c, shards, policy_, direct)),
        map_(layout_.num_blocks(), shards_, c.omni.shard_layout,
             ShardMap::default_stripe(c.omni.block_size * c.elem_size, layout_.num_blocks(), shards_)),
        marks_(layout_.num_blocks(), 0),
        sent_(static_cast<size_t>(colocated() ? c.nodes : c.nodes + shards_), 0),
        received_(static_cast<size_t>(shards_), 0) {}

  RouteCost count() {
    for (int w = 0; w < c_.nodes; ++w) count_worker(w);
    RouteTraffic traffic;
    for (double bytes : received_)  // the shards route tells it in a 32-bit tag
      traffic.inputs += direct_ ? static_cast<uint64_t>(bytes) : traffic_tag(static_cast<uint64_t>(bytes));
    for (int s = 0; s < shards_; ++s) {
      const double result = count_results(s);
      traffic.results += static_cast<uint64_t>(result);
      for (int w = 0; w < c_.nodes && !direct_; ++w)
        if (w != shard_rank(s)) sent_[static_cast<size_t>(shard_rank(s))] += result;
    }
    WireCost cost{0, 0, true};
    for (double x : sent_) {
      cost.sent_per_rank_max = std::max(cost.sent_per_rank_max, x);
      cost.sent_total += x;
    }
    return {cost, traffic};
  }

 private:
  // Per block: whether some worker holds it, and whether it begins a batch
  // of some worker.
  static constexpr uint8_t kInUnion = 1, kStartsBatch = 2;

  // A stream's open batch, its last block and weight, and its closed batches' bytes.
  struct OpenStream {
    BatchShape open;
    uint64_t first = 1;  // the open batch's first block (1 > last: empty)
    uint64_t last = 0;
    uint64_t weight = 0;
    double closed = 0;
  };

  bool colocated() const { return c_.aggregators == 0; }
  int shard_rank(int s) const { return colocated() ? s : c_.nodes + s; }
  uint64_t block_end(uint64_t b) const { return layout_.block_begin(b) + layout_.block_length(b); }
  // Worker w's non-zeros in block b (-1: their sum's).
  uint64_t nonzeros(int w, uint64_t b) const {
    if (policy_ == EncodingPolicy::kBlocks) return 0;
    return w < 0 ? c_.support->sum_elements(layout_.block_begin(b), block_end(b))
                 : c_.support->elements(w, layout_.block_begin(b), block_end(b));
  }
  void add_block(BatchShape& shape, uint64_t& weight, int w, uint64_t b) const {
    const uint64_t n = nonzeros(w, b);
    shape.add_block(layout_.block_begin(b), layout_.block_length(b), n);
    weight += BatchCut::block_weight(policy_, layout_.block_length(b), n, c_.elem_size);
  }

  // Worker w's streams to every shard, and what they put on the wire.
  void count_worker(int w) {
    streams_.assign(static_cast<size_t>(shards_), OpenStream{});
    std::vector<uint64_t> blocks;
    if (dense_) {
      blocks.resize(layout_.num_blocks());
      for (uint64_t b = 0; b < blocks.size(); ++b) blocks[b] = b;
    } else {
      blocks = c_.support->blocks(w, layout_);
    }
    for (uint64_t b : blocks) {
      OpenStream& st = streams_[static_cast<size_t>(map_.owner(b))];
      const bool starts = st.open.blocks > 0 && cut_.starts_new(st.last, b, st.weight);
      marks_[b] |= kInUnion | (starts ? kStartsBatch : 0);
      if (starts) {
        st.closed += close_input(w, s_of(st), st);
        st.open = BatchShape{};
        st.weight = 0;
      }
      if (st.open.blocks == 0) st.first = b;
      add_block(st.open, st.weight, w, b);
      st.last = b;
    }
    for (int s = 0; s < shards_; ++s) {
      OpenStream& st = streams_[static_cast<size_t>(s)];
      const double bytes = st.closed + close_input(w, s, st);
      received_[static_cast<size_t>(s)] += bytes;
      if (direct_)
        sent_[static_cast<size_t>(w)] += (c_.nodes - 1) * bytes;
      else if (shard_rank(s) != w)  // its own shard is in memory
        sent_[static_cast<size_t>(w)] += bytes;
    }
  }

  int s_of(const OpenStream& st) const { return static_cast<int>(&st - streams_.data()); }

  // The open batch of worker w's stream to shard s, closed: its bytes.
  double close_input(int w, int s, const OpenStream& st) const {
    const double bytes = batch_bytes(policy_, st.open, c_.elem_size);
    if (visitor_) visitor_->input_batch(w, s, bytes, st.open.blocks ? st.first : 1, st.open.blocks ? st.last : 0);
    return bytes;
  }

  // Shard s's result stream: its bytes.
  double count_results(int s) const {
    double result = 0;
    BatchShape batch;
    uint64_t weight = 0, first = 1, last = 0;
    auto close = [&] {
      const double bytes = batch_bytes(policy_, batch, c_.elem_size);
      if (visitor_) visitor_->result_batch(s, bytes, batch.blocks ? first : 1, batch.blocks ? last : 0);
      result += bytes;
    };
    map_.for_each_run(s, 0, layout_.num_blocks(), [&](uint64_t begin, uint64_t end) {
      for (uint64_t b = begin; b < end; ++b) {
        if (!(marks_[b] & kInUnion)) continue;
        const bool full = batch.blocks == cut_.result_blocks || weight >= cut_.result_weight;
        if (full || ((marks_[b] & kStartsBatch) && batch.blocks > 0)) {
          close();
          batch = BatchShape{};
          weight = 0;
        }
        if (batch.blocks == 0) first = b;
        add_block(batch, weight, -1, b);  // a result block is the sum of the tensors
        last = b;
      }
    });
    close();
    return result;
  }

  const CostInputs& c_;
  BatchVisitor* const visitor_;
  const bool dense_;
  const bool direct_;
  const int shards_;
  const BlockLayout layout_;
  const EncodingPolicy policy_;
  const BatchCut cut_;
  const ShardMap map_;
  std::vector<uint8_t> marks_;
  std::vector<double> sent_;      // per rank
  std::vector<double> received_;  // per shard, from every worker
  std::vector<OpenStream> streams_;
};

}  // namespace

RouteCost exact_cost(const CostInputs& c, bool dense, int shards, bool direct) {
  return ExactCount(c, dense, shards, direct, nullptr).count();
}

RouteCost exact_cost(const CostInputs& c, bool dense, int shards, bool direct, BatchVisitor* visitor) {
  return ExactCount(c, dense, shards, direct, visitor).count();
}

}  // namespace omnib
