// The OmniReduce-style block-sparse streaming allreduce.
//
// Workers stream their non-zero blocks, shard by shard, to aggregator shards;
// each shard reduces a block as soon as every worker that holds it delivered it
// and streams the sum back to all workers. Zero blocks never cross the wire.
// See docs/algorithms.md for the protocol and its cost.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/collective.h"
#include "engine/lane_group.h"
#include "engine/omni/shard_aggregator.h"
#include "engine/omni/worker_block_io.h"

namespace omnib {

struct OmniOptions {
  bool dense = false;               // send every block (the dense parameter-server baseline)
  size_t frame_bytes = 256 << 10;   // target size of one batch of block values
  size_t window_frames = 4;         // batches a shard buffers per worker
};

class OmniCollective final : public Collective {
 public:
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup, OmniOptions options);
  ~OmniCollective() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override { return links_.wire_counters(); }

  // Analytic wire bytes (docs/algorithms.md), for both sparse and dense modes.
  static WireCost analytic_cost(const CostInputs& c, bool dense);
  // Device tensors need the CUDA block IO, which a build may lack.
  static std::optional<std::string> unavailable_reason(const CollectiveSetup& setup);

 private:
  OmniCollective(const CollectiveSetup& setup, OmniOptions options, LinkSet links, std::unique_ptr<WorkerBlockIo> io);

  int shards() const { return job_.aggregators > 0 ? job_.aggregators : job_.nodes; }
  int shard_rank(int shard) const { return job_.aggregators > 0 ? job_.nodes + shard : shard; }
  int my_shard() const;  // shard hosted by this rank, or -1
  size_t link_id(int worker, int shard) const { return static_cast<size_t>(worker * shards() + shard); }
  size_t blocks_per_frame() const;

  Status send_shard(int shard);
  Status receive_shard(int shard);
  Status read_worker(int worker);
  Status aggregate();
  void abort();

  JobLayout job_;
  OmniOptions options_;
  DType dtype_;
  size_t elem_size_;
  size_t block_size_;
  LinkSet links_;
  std::unique_ptr<WorkerBlockIo> io_;  // null on dedicated aggregators
  std::unique_ptr<LaneGroup> lanes_;

  // Per-lane buffers kept between collectives, so that a call allocates
  // nothing (fresh pages would cost a fault each).
  struct ReceiveScratch {
    Frame frame;
    BatchView view;
  };
  std::vector<std::vector<iovec>> send_iov_;    // one per shard
  std::vector<ReceiveScratch> receive_scratch_;  // one per shard
  ResultBatch result_batch_;                     // the aggregator lane's
  std::vector<iovec> result_iov_;                // the aggregator lane's

  // Per-collective state, set by allreduce before the lanes start.
  uint64_t seq_ = 0;
  TensorView in_;
  TensorView out_;
  BlockLayout layout_{0, 1};

  // Shard state shared by the reader lanes and the aggregator lane.
  // Two conditions, so that a push wakes only the aggregator and a consumed
  // batch only the readers.
  std::mutex shard_mu_;
  std::condition_variable window_cv_;  // readers wait for window space
  std::condition_variable input_cv_;   // the aggregator waits for a push
  std::unique_ptr<ShardAggregator> aggregator_;
  bool shard_aborted_ = false;
};

}  // namespace omnib
