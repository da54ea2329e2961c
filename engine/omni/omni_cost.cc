#include "engine/omni/omni_cost.h"

#include <algorithm>
#include <cmath>

#include "engine/omni/block_batch.h"
#include "engine/omni/stream_tuning.h"
#include "engine/transport/frame_format.h"

namespace omnib {
namespace {

constexpr double kFrameOverhead = sizeof(wire::FrameHeader) + sizeof(BatchHeader);

// The engine's batch length in blocks (engine/omni/stream_tuning.h) for this
// tensor and link.
size_t blocks_per_frame(const CostInputs& c, int shards) {
  const auto tensor_bytes = static_cast<uint64_t>(c.count * c.elem_size);
  const StreamTuning t = tune_streams(c.link_rate_bps, c.nodes, tensor_bytes / static_cast<uint64_t>(shards));
  return std::max<size_t>(1, t.frame_bytes / (c.block_size * c.elem_size));
}

// From average densities: every shard gets its even share of each rank's
// blocks, and streams end on full frames.
WireCost estimated_cost(const CostInputs& c, bool dense, int shards) {
  const double nb = std::ceil(static_cast<double>(c.count) / static_cast<double>(c.block_size));
  const double block_bytes = static_cast<double>(c.block_size * c.elem_size);
  const double d = dense ? 1.0 : c.block_density;
  const double u = dense ? 1.0 : c.union_block_density;
  const auto per_frame = static_cast<double>(blocks_per_frame(c, shards));
  // A stream of k blocks costs k blocks with their indices, plus one
  // frame header and batch header per frame (at least one frame).
  auto stream = [&](double blocks) {
    const double frames = std::max(1.0, std::ceil(blocks / per_frame));
    return blocks * (block_bytes + 8) + frames * kFrameOverhead;
  };
  const double shard_blocks = nb / shards;
  if (c.aggregators == 0) {
    const double upload = (c.nodes - 1) * stream(d * shard_blocks);
    const double download = (c.nodes - 1) * stream(u * shard_blocks);
    return {upload + download, c.nodes * (upload + download), false};
  }
  const double worker_sent = shards * stream(d * shard_blocks);
  const double aggregator_sent = c.nodes * stream(u * shard_blocks);
  return {std::max(worker_sent, aggregator_sent), c.nodes * worker_sent + shards * aggregator_sent, false};
}

// Counted block by block the way the engine cuts its streams: a worker's
// stream to a shard into frames of per_frame blocks; a shard's result stream
// at per_frame blocks and before every block that begins a new batch of some
// worker holding it (engine/omni/shard_aggregator.h).
WireCost exact_cost(const CostInputs& c, bool dense, int shards) {
  const BlockLayout layout(c.count, c.block_size);
  const uint64_t nb = layout.num_blocks();
  const ShardMap map(nb, shards, c.shard_layout, ShardMap::default_stripe(c.block_size * c.elem_size));
  const size_t per_frame = blocks_per_frame(c, shards);
  const bool colocated = c.aggregators == 0;
  auto shard_rank = [&](int s) { return colocated ? s : c.nodes + s; };
  auto bytes_of = [&](uint64_t b) { return static_cast<double>(layout.block_length(b) * c.elem_size + 8); };
  auto frames_of = [&](uint64_t blocks) {
    return std::max<double>(1, std::ceil(static_cast<double>(blocks) / static_cast<double>(per_frame)));
  };
  // A block belongs to one shard: per block, whether some worker holds it
  // (kInUnion) and whether it begins a batch of some worker (kStartsBatch).
  constexpr uint8_t kInUnion = 1, kStartsBatch = 2;
  std::vector<uint8_t> marks(nb, 0);
  std::vector<double> sent(static_cast<size_t>(colocated ? c.nodes : c.nodes + shards), 0);
  std::vector<uint64_t> held(static_cast<size_t>(shards));
  std::vector<double> upload(static_cast<size_t>(shards));
  std::vector<uint64_t> all;
  if (dense) {
    all.resize(nb);
    for (uint64_t b = 0; b < nb; ++b) all[b] = b;
  }
  for (int w = 0; w < c.nodes; ++w) {
    std::fill(held.begin(), held.end(), 0);
    std::fill(upload.begin(), upload.end(), 0);
    const std::vector<uint64_t> mine = dense ? std::vector<uint64_t>{} : c.support->blocks(w, layout);
    for (uint64_t b : dense ? all : mine) {
      const auto s = static_cast<size_t>(map.owner(b));
      upload[s] += bytes_of(b);
      marks[b] |= kInUnion | (held[s] > 0 && held[s] % per_frame == 0 ? kStartsBatch : 0);
      ++held[s];
    }
    for (int s = 0; s < shards; ++s)
      if (shard_rank(s) != w)  // its own shard is in memory
        sent[static_cast<size_t>(w)] += upload[static_cast<size_t>(s)] + frames_of(held[static_cast<size_t>(s)]) * kFrameOverhead;
  }
  for (int s = 0; s < shards; ++s) {
    double frames = 1, result = 0;
    size_t in_frame = 0;
    map.for_each_run(s, 0, nb, [&](uint64_t begin, uint64_t end) {
      for (uint64_t b = begin; b < end; ++b) {
        if (!(marks[b] & kInUnion)) continue;
        if (in_frame == per_frame || ((marks[b] & kStartsBatch) && in_frame > 0)) {
          ++frames;
          in_frame = 0;
        }
        ++in_frame;
        result += bytes_of(b);
      }
    });
    result += frames * kFrameOverhead;
    for (int w = 0; w < c.nodes; ++w)
      if (w != shard_rank(s)) sent[static_cast<size_t>(shard_rank(s))] += result;
  }
  WireCost cost{0, 0, true};
  for (double x : sent) {
    cost.sent_per_rank_max = std::max(cost.sent_per_rank_max, x);
    cost.sent_total += x;
  }
  return cost;
}

}  // namespace

WireCost omni_analytic_cost(const CostInputs& c, bool dense) {
  const int shards = c.aggregators > 0 ? c.aggregators : c.nodes;
  if (c.support != nullptr || dense) return exact_cost(c, dense, shards);
  return estimated_cost(c, dense, shards);
}

}  // namespace omnib
