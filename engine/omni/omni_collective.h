// The OmniReduce-style block-sparse streaming allreduce.
//
// Workers stream their non-zero blocks, shard by shard, to aggregator shards;
// each shard reduces a block as soon as every worker that holds it delivered it
// and streams the sum back to all workers. Zero blocks never cross the wire.
// On the direct route (engine/omni/route_choice.h) every worker streams all
// its non-zero blocks to every worker instead, and every worker reduces the
// whole tensor in rank order, so all get the same bits without a result
// stream. See docs/algorithms.md for the protocol and its cost.
//
// Threads: however many ranks and shards the job has, a worker runs two lanes
// (one sends to every shard, one receives from every shard) and a shard runs
// one (it reads every worker and answers them all); the process's network
// thread (engine/transport/io_loop.h) moves the bytes. A lane that serves
// many links waits on one Waker for all of them.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/collective.h"
#include "engine/lane_group.h"
#include "engine/omni/packed_batches.h"
#include "engine/omni/route_choice.h"
#include "engine/omni/shard_aggregator.h"
#include "engine/omni/stream_tuning.h"
#include "engine/omni/worker_block_io.h"

namespace omnib {

struct OmniOptions {
  bool dense = false;  // send every block (the dense parameter-server baseline)
};

class OmniCollective final : public Collective {
 public:
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup, OmniOptions options);
  ~OmniCollective() override;

  Status allreduce(const TensorView& in, const TensorView& out) override;
  std::optional<ByteCounters> wire_counters() const override { return links_.wire_counters(); }
  const char* last_route() const override { return last_route_; }

  // Device tensors need the CUDA block IO, which a build may lack.
  static std::optional<std::string> unavailable_reason(const CollectiveSetup& setup);

 private:
  OmniCollective(const CollectiveSetup& setup, OmniOptions options, bool direct_on_one_lane, LinkSet links,
                 std::unique_ptr<WorkerBlockIo> io);

  int shards() const { return job_.aggregators > 0 ? job_.aggregators : job_.nodes; }
  int shard_rank(int shard) const { return job_.aggregators > 0 ? job_.nodes + shard : shard; }
  int my_shard() const;  // shard hosted by this rank, or -1
  bool direct() const { return route_ == RoutePolicy::kDirect; }
  bool direct_possible() const { return job_.aggregators == 0 && job_.nodes > 1; }
  // The stream a worker sends to `shard` (on the direct route every
  // destination gets the one whole-tensor stream, kept in slot 0).
  int stream_of(int shard) const { return direct() ? 0 : shard; }
  // Where a worker's send lane sends: every rank on the direct route, else
  // the shards in use this call.
  int destinations() const { return direct() ? shards() : map_.shards(); }
  size_t link_id(int worker, int shard) const { return static_cast<size_t>(worker * shards() + shard); }
  Connection& to_shard(int shard) { return *links_.dialer_end[link_id(job_.rank, shard)]; }
  Connection& from_worker(int worker) { return *links_.acceptor_end[link_id(worker, my_shard())]; }
  void size_streams();  // batch size and windows for this call's tensor

  // The lanes' roles. Each loops over its rounds and waits on its Waker
  // when a round moved nothing.
  Status send_all();
  Status receive_all();
  Status aggregate();
  Status aggregate_direct();
  Status send_and_aggregate_direct();  // the direct route's two roles on one lane
  // The send role in rounds: begin_send once per call, then send_round
  // until send_phase_ is kSent.
  enum class SendPhase { kStreaming, kDraining, kSent };
  void begin_send();
  Status send_round(bool& moved);
  Status drain_sends(bool& moved);  // kDraining: waits on nothing, checks the last sends
  std::string send_stall_message() const;
  SendPhase send_phase_ = SendPhase::kSent;
  uint64_t scanned_ = 0;     // blocks the scan has looked at this call
  int draining_shard_ = 0;   // a destination whose last sends are unfinished
  // The direct route's aggregation in rounds, likewise: aggregated_ once
  // every stream is summed and stored.
  Status begin_aggregate_direct();
  Status aggregate_direct_round(bool& moved);
  Status direct_links_health();
  std::vector<char> direct_input_ended_;  // per worker: its stream has ended
  uint8_t* direct_sums_at_ = nullptr;     // the output the sums go into, if not held
  bool direct_reduced_ = false;           // the last sums are made
  bool aggregated_ = false;
  // Whether the direct route runs both roles on the calling thread: when
  // this host's workers have fewer cores than two lanes each
  // (OMNIB_DIRECT_LANES=1 or 2 forces one or two; create() asks direct_lanes.h).
  const bool direct_on_one_lane_;
  bool links_wake_one_lane_ = false;  // the worker links' send events tell aggregate_waker_
  // Takes what the workers sent, up to the window, into the aggregator;
  // `stream` is the map's shard the batches belong to.
  Status take_inputs(int stream, std::vector<char>& input_ended, bool& moved);
  // Direct route: writes the sums into the output, and sizes them as the
  // shards route would send them (traffic_.results) when the route is auto.
  Status store_direct(const ResultBatch& batch);
  // The same sizing alone, of a batch whose sums are at `sums_at` (the
  // output, summed into in place) or, when null, in batch.values.
  void count_direct_results(const ResultBatch& batch, const uint8_t* sums_at);
  // Direct route in place: a worker's block may be overwritten by its sum
  // only once it was sent to every peer. The send lane advances
  // `unsent_from_` (the least over destinations) as its sends finish; the
  // aggregate lane holds the sums above it in `held_`, never blocking, since
  // its peers' sends wait on it taking their input.
  struct SendShard;
  void publish_sent(SendShard& ss, Connection& link);
  // Cuts the batches of `stream` that its found blocks (all of them, once
  // `complete`) make whole.
  void cut_stream(SendShard& stream, bool complete) const;
  Status store_ready_direct();
  bool in_place_ = false;
  std::atomic<uint64_t> unsent_from_{0};
  std::deque<ResultBatch> held_;
  std::vector<ResultBatch> spare_results_;
  void abort();
  // The payload iovecs of a batch (header, indices, then values or packed).
  void batch_iovecs(const BatchHeader& header, std::span<const uint64_t> blocks, std::span<const iovec> values,
                    const UninitBytes* packed, std::vector<iovec>& out) const;

  JobLayout job_;
  OmniOptions options_;
  size_t elem_size_;
  size_t block_size_;
  uint64_t link_rate_bps_;
  ShardLayout layout_kind_;
  EncodingPolicy encoding_;  // blocks for the dense baseline
  std::chrono::milliseconds timeout_;
  LinkSet links_;
  std::unique_ptr<WorkerBlockIo> io_;  // null on dedicated aggregators
  std::unique_ptr<ShardAggregator> aggregator_;  // null unless this rank hosts a shard
  std::unique_ptr<LaneGroup> lanes_;
  // Told by this rank's links when a frame arrives or a send finishes.
  Waker send_waker_, receive_waker_, aggregate_waker_;

  // Kept between collectives, so that a call allocates nothing once warm.
  struct SendShard {
    std::vector<uint64_t> found;  // this call's blocks of the shard, in order (capacity fixed per call)
    std::vector<uint32_t> nonzeros;  // per found block, unless every batch is sent as blocks
    FoundElements taken;             // with nonzeros: the elements the scan took
    size_t sent = 0;              // of `found`
    bool ended = false;           // the batch announcing the end is posted
    uint64_t last_ticket = 0;
    uint64_t first_ticket = 0;    // last_ticket when the call began: batch k is ticket first_ticket + k + 1
    // Direct route in place: sends known finished, and the first block not
    // yet sent to this destination (kEndOfStream once all are).
    uint64_t acked = 0;
    uint64_t unsent_from = 0;
    std::vector<BatchHeader> headers;  // one per send window slot: live until its send finishes
    // The stream's batches, cut once for all its destinations (where a batch
    // ends depends only on the data): batch k is found[batch_ends[k - 1],
    // batch_ends[k]). A batch is cut once the block after it is known, or
    // at the end; cut_to and cut_weight are the open batch's progress.
    std::vector<size_t> batch_ends;
    size_t cut_to = 0;
    uint64_t cut_weight = 0;
    PackedBatches packed;  // the stream's sparse payloads, shared by its destinations
    uint64_t batches_posted() const { return last_ticket - first_ticket; }
    uint64_t batches_finished() const { return acked - first_ticket; }
  };
  std::vector<SendShard> send_shards_;
  std::vector<uint64_t> found_scratch_;
  std::vector<uint32_t> nonzeros_scratch_;
  FoundElements taken_scratch_;
  std::vector<iovec> values_iov_;  // the send lane's: a batch's whole blocks, before packing
  std::vector<iovec> send_iov_;    // the send lane's
  std::vector<iovec> result_iov_;  // the aggregator lane's
  std::vector<Frame> result_frames_;  // one per shard, receive lane
  BatchView result_view_;
  // One result batch goes to every worker: it stays until all have it.
  struct ResultSlot {
    ResultBatch batch;
    BatchHeader header{};
    UninitBytes packed;  // the batch in a sparse encoding, when that is smaller
    std::vector<uint64_t> tickets;  // per worker: the send of this batch
    bool busy = false;
  };
  std::vector<ResultSlot> result_slots_;
  // Picks the encoding of the slot's result batch and, if sparse, packs it.
  Status encode_result(ResultSlot& slot);
  // The shape of a batch of sums (their non-zeros counted: a sum can cancel),
  // which are in batch.values, or at their places from `sums_at`; with
  // `estimate`, a block takes its holders' counts where it has them
  // (ResultBatch::estimated_counts: for the route choice, not for packing).
  BatchShape result_shape(const ResultBatch& batch, const uint8_t* sums_at = nullptr, bool estimate = false) const;

  RoutePolicy route_policy_;
  RoutePolicy route_ = RoutePolicy::kShards;  // this call's route
  const char* last_route_ = nullptr;
  // What this call tells every rank alike (route_choice.h): counted by the
  // receive lane on the shards route, by the aggregate lane on the direct one.
  RouteTraffic traffic_;
  uint64_t shard_inputs_ = 0;  // a shard's: bytes its workers sent it this call

  // Per-collective state, set by allreduce before the lanes start.
  uint64_t seq_ = 0;
  BlockLayout layout_{0, 1};
  ShardMap map_;  // on the direct route, one shard: the whole tensor
  int active_shards_ = 1;  // shards in use this call (ShardMap::active_shards)
  StreamTuning to_shards_;   // worker -> shard streams
  StreamTuning to_workers_;  // shard -> worker streams
  BatchCut cut_;  // how worker streams and shards' results are cut into batches
};

}  // namespace omnib
