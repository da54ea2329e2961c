#include "engine/omni/omni_cost.h"

#include <algorithm>
#include <cmath>

#include "engine/omni/batch_encoding.h"
#include "engine/omni/block_batch.h"
#include "engine/omni/route_choice.h"
#include "engine/omni/stream_tuning.h"
#include "engine/transport/frame_format.h"

namespace omnib {
namespace {

constexpr double kFrameOverhead = sizeof(wire::FrameHeader) + sizeof(BatchHeader);

// How the engine cuts its streams (engine/omni/stream_tuning.h) for this
// tensor, link and route.
BatchCut batch_cut(const CostInputs& c, int shards, EncodingPolicy policy, bool direct) {
  const auto tensor_bytes = static_cast<uint64_t>(c.count * c.elem_size);
  const uint64_t budget = direct ? direct_receive_budget_bytes(c.omni.link_rate_bps) : receive_budget_bytes(c.omni.link_rate_bps);
  const StreamTuning t = tune_streams(c.omni.link_rate_bps, c.nodes, tensor_bytes / static_cast<uint64_t>(shards), budget);
  return BatchCut::for_blocks(c.omni.block_size * c.elem_size, t.frame_bytes, policy);
}

// A batch's bytes on the wire in the encoding the engine picks for it.
double batch_bytes(EncodingPolicy policy, const BatchShape& shape, size_t elem_size) {
  return static_cast<double>(encoded_bytes(choose_encoding(policy, shape, elem_size), shape, elem_size)) +
         kFrameOverhead;
}

// A route's bytes and the traffic that picks the next call's route.
struct RouteCost {
  WireCost cost;
  RouteTraffic traffic;
};

// From average densities: every shard gets its even share of each rank's
// blocks, every non-zero block the average count of non-zeros, and streams
// end on full frames.
RouteCost estimated_cost(const CostInputs& c, bool dense, int shards, bool direct) {
  const double nb = std::ceil(static_cast<double>(c.count) / static_cast<double>(c.omni.block_size));
  const double d = dense ? 1.0 : c.stats.block_density;
  const double u = dense ? 1.0 : c.stats.union_block_density;
  const EncodingPolicy policy = dense ? EncodingPolicy::kBlocks : c.omni.encoding;
  const BatchCut cut = batch_cut(c, shards, policy, direct);
  const auto full = static_cast<double>(cut.batch_weight);
  const auto groups = static_cast<double>(
      BatchCut::groups_in(static_cast<uint64_t>(std::ceil(nb / static_cast<double>(cut.piece_blocks)))));
  // A stream of k blocks, `fill` of whose elements are non-zero: a batch per
  // full batch's weight, and at least one per group of scan pieces that holds
  // a block (under the sparse policies, per group or quarter batch, whichever
  // is more).
  auto stream = [&](double blocks, double fill) {
    BatchShape shape;
    shape.blocks = static_cast<uint64_t>(std::llround(blocks));
    shape.elements = shape.blocks * c.omni.block_size;
    shape.nonzeros = static_cast<uint64_t>(std::llround(static_cast<double>(shape.elements) * fill));
    shape.bitmap_bytes = shape.blocks * ((c.omni.block_size + 7) / 8);
    shape.span_end = shape.blocks > 0 ? static_cast<uint64_t>(c.count) : 0;  // at most the tensor's pages
    const double weight = blocks * static_cast<double>(BatchCut::block_weight(
                                       policy, c.omni.block_size, std::llround(c.omni.block_size * fill), c.elem_size));
    const double per_piece =
        cut.merge_pieces ? std::min({blocks, groups, std::ceil(weight / (full / 4))}) : std::min(blocks, groups);
    const double frames = std::max({1.0, std::ceil(weight / full), per_piece});
    return batch_bytes(policy, shape, c.elem_size) + (frames - 1) * kFrameOverhead;
  };
  const double fill = dense || d <= 0 ? 1.0 : std::min(1.0, c.stats.element_density / d);
  const double union_fill = dense || u <= 0 ? 1.0 : std::min(1.0, c.stats.union_element_density / u);
  const double shard_blocks = nb / shards;
  const RouteTraffic traffic{static_cast<uint64_t>(c.nodes * shards * stream(d * shard_blocks, fill)),
                             static_cast<uint64_t>(shards * stream(u * shard_blocks, union_fill))};
  if (direct) {
    const double sent = (c.nodes - 1) * stream(d * nb, fill);
    return {{sent, c.nodes * sent, false}, traffic};
  }
  if (c.aggregators == 0) {
    // Ranks 0..shards-1 host the shards in use; a rank's own shard is in memory.
    const double up = stream(d * shard_blocks, fill), down = stream(u * shard_blocks, union_fill);
    const double busiest = std::max(shards * up, (shards - 1) * up + (c.nodes - 1) * down);
    return {{busiest, shards * (c.nodes - 1) * (up + down), false}, traffic};
  }
  const double worker_sent = shards * stream(d * shard_blocks, fill);
  const double aggregator_sent = c.nodes * stream(u * shard_blocks, union_fill);
  return {{std::max(worker_sent, aggregator_sent), c.nodes * worker_sent + shards * aggregator_sent, false}, traffic};
}

// Counted block by block the way the engine cuts its streams: a worker's
// stream to a shard into batches by BatchCut; a shard's result stream when
// a batch is full (BatchCut's result_blocks, result_weight) and before every
// block that begins a new batch of some worker holding it
// (engine/omni/shard_aggregator.h). Each batch in the
// encoding the engine picks from its non-zero counts. The direct route is
// the same count over one shard, the whole tensor: every worker sends its
// one stream to every other, and nobody sends results.
RouteCost exact_cost(const CostInputs& c, bool dense, int shards, bool direct) {
  const BlockLayout layout(c.count, c.omni.block_size);
  const uint64_t nb = layout.num_blocks();
  const EncodingPolicy policy = dense ? EncodingPolicy::kBlocks : c.omni.encoding;
  const BatchCut cut = batch_cut(c, shards, policy, direct);
  if (direct) shards = 1;
  const ShardMap map(nb, shards, c.omni.shard_layout, ShardMap::default_stripe(c.omni.block_size * c.elem_size, nb, shards));
  const bool colocated = c.aggregators == 0;
  auto shard_rank = [&](int s) { return colocated ? s : c.nodes + s; };
  auto block_end = [&](uint64_t b) { return layout.block_begin(b) + layout.block_length(b); };
  // A block belongs to one shard: per block, whether some worker holds it
  // (kInUnion) and whether it begins a batch of some worker (kStartsBatch).
  constexpr uint8_t kInUnion = 1, kStartsBatch = 2;
  std::vector<uint8_t> marks(nb, 0);
  std::vector<double> sent(static_cast<size_t>(colocated ? c.nodes : c.nodes + shards), 0);
  std::vector<BatchShape> open(static_cast<size_t>(shards));  // the shard's open batch
  std::vector<uint64_t> last(static_cast<size_t>(shards));    // its last block
  std::vector<uint64_t> weight(static_cast<size_t>(shards));  // its weight (BatchCut)
  std::vector<double> upload(static_cast<size_t>(shards));    // closed batches' bytes
  std::vector<double> received(static_cast<size_t>(shards));  // by the shard, from every worker
  std::vector<uint64_t> all;
  if (dense) {
    all.resize(nb);
    for (uint64_t b = 0; b < nb; ++b) all[b] = b;
  }
  for (int w = 0; w < c.nodes; ++w) {
    std::fill(open.begin(), open.end(), BatchShape{});
    std::fill(weight.begin(), weight.end(), 0);
    std::fill(upload.begin(), upload.end(), 0);
    const std::vector<uint64_t> mine = dense ? std::vector<uint64_t>{} : c.support->blocks(w, layout);
    for (uint64_t b : dense ? all : mine) {
      const auto s = static_cast<size_t>(map.owner(b));
      const bool starts = open[s].blocks > 0 && cut.starts_new(last[s], b, weight[s]);
      marks[b] |= kInUnion | (starts ? kStartsBatch : 0);
      if (starts) {
        upload[s] += batch_bytes(policy, open[s], c.elem_size);
        open[s] = BatchShape{};
        weight[s] = 0;
      }
      const uint64_t nonzeros =
          policy == EncodingPolicy::kBlocks ? 0 : c.support->elements(w, layout.block_begin(b), block_end(b));
      open[s].add_block(layout.block_begin(b), layout.block_length(b), nonzeros);
      weight[s] += BatchCut::block_weight(policy, layout.block_length(b), nonzeros, c.elem_size);
      last[s] = b;
    }
    for (int s = 0; s < shards; ++s) {
      const double bytes = upload[static_cast<size_t>(s)] + batch_bytes(policy, open[static_cast<size_t>(s)], c.elem_size);
      received[static_cast<size_t>(s)] += bytes;
      if (direct)
        sent[static_cast<size_t>(w)] += (c.nodes - 1) * bytes;
      else if (shard_rank(s) != w)  // its own shard is in memory
        sent[static_cast<size_t>(w)] += bytes;
    }
  }
  RouteTraffic traffic;
  for (double bytes : received)  // the shards route tells it in a 32-bit tag
    traffic.inputs += direct ? static_cast<uint64_t>(bytes) : traffic_tag(static_cast<uint64_t>(bytes));
  for (int s = 0; s < shards; ++s) {
    double result = 0;
    BatchShape batch;
    uint64_t batch_weight = 0;
    map.for_each_run(s, 0, nb, [&](uint64_t begin, uint64_t end) {
      for (uint64_t b = begin; b < end; ++b) {
        if (!(marks[b] & kInUnion)) continue;
        const bool full = batch.blocks == cut.result_blocks || batch_weight >= cut.result_weight;
        if (full || ((marks[b] & kStartsBatch) && batch.blocks > 0)) {
          result += batch_bytes(policy, batch, c.elem_size);
          batch = BatchShape{};
          batch_weight = 0;
        }
        // A result block is the sum of the tensors.
        const uint64_t nonzeros =
            policy == EncodingPolicy::kBlocks ? 0 : c.support->sum_elements(layout.block_begin(b), block_end(b));
        batch.add_block(layout.block_begin(b), layout.block_length(b), nonzeros);
        batch_weight += BatchCut::block_weight(policy, layout.block_length(b), nonzeros, c.elem_size);
      }
    });
    result += batch_bytes(policy, batch, c.elem_size);
    traffic.results += static_cast<uint64_t>(result);
    for (int w = 0; w < c.nodes && !direct; ++w)
      if (w != shard_rank(s)) sent[static_cast<size_t>(shard_rank(s))] += result;
  }
  WireCost cost{0, 0, true};
  for (double x : sent) {
    cost.sent_per_rank_max = std::max(cost.sent_per_rank_max, x);
    cost.sent_total += x;
  }
  return {cost, traffic};
}

}  // namespace

WireCost omni_analytic_cost(const CostInputs& c, bool dense) {
  const int all = c.aggregators > 0 ? c.aggregators : c.nodes;
  // As the engine deals the tensor: a small one to fewer shards.
  const int shards = ShardMap::active_shards(c.omni.block_size * c.elem_size, BlockLayout(c.count, c.omni.block_size).num_blocks(), all);
  // The dense baseline sends every block whole: it needs no inputs to count.
  const bool exact = c.support != nullptr || dense;
  auto cost_of = [&](RoutePolicy route) {
    const bool direct = route == RoutePolicy::kDirect;
    return exact ? exact_cost(c, dense, shards, direct) : estimated_cost(c, dense, shards, direct);
  };
  const bool possible = !dense && c.aggregators == 0 && c.nodes > 1;
  if (c.omni.route != RoutePolicy::kAuto || !possible)
    return cost_of(possible ? c.omni.route : RoutePolicy::kShards).cost;
  // Auto: the first call takes the shards route, the next the route its
  // traffic picks, and so on (route_choice.h); a warm call is where that
  // settles. Were it to alternate, no one call's bytes are the model's.
  const RouteCost first = cost_of(RoutePolicy::kShards);
  if (next_route(c.omni.route, RoutePolicy::kShards, first.traffic, c.nodes, possible) == RoutePolicy::kShards)
    return first.cost;
  RouteCost warm = cost_of(RoutePolicy::kDirect);
  if (next_route(c.omni.route, RoutePolicy::kDirect, warm.traffic, c.nodes, possible) != RoutePolicy::kDirect)
    warm.cost.exact = false;
  return warm.cost;
}

}  // namespace omnib
