// How big the omni engine's batches are and how many of them may be in
// flight, chosen from the link and the job rather than fixed: a receiver
// fed by many senders keeps at most a few milliseconds of its link in flight
// in all (so that incast cannot overflow the queue in front of it), and a
// link's stream is cut into several batches (so the pipeline fills at once
// and drains late). docs/algorithms.md states the rules and the bound.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/omni/settings/encoding_policy.h"

namespace omnib {

struct StreamTuning {
  size_t frame_bytes = 0;     // target bytes of block values per batch
  size_t recv_frames = 0;     // frames a receiving end holds before it stops reading
  size_t send_frames = 0;     // posted frames a sending end keeps unfinished
  size_t inflight_bytes = 0;  // bytes a link may have in flight to its receiver; 0: the transport's default
  bool operator==(const StreamTuning&) const = default;
};

// Bytes a receiver keeps in flight over all its links: 4 ms at its link rate,
// or, when the rate is unknown (loopback, a real cluster), 8 MiB. (A floor of
// 128 KiB halved the frames' CPU on a loaded machine but, quiet, made slow
// links' frames tens of milliseconds long: 2 workers at 25 Mbit/s fell from
// 96% to 85% of their link limit.)
uint64_t receive_budget_bytes(uint64_t link_rate_bps);

// The same for the direct route, whose one stream is all that arrives on a
// rank's link (on the shards route a rank's worker and its shard each get a
// budget): the shards route's, and at least 256 KiB (which is more below
// about 520 Mbit/s). A scattered tensor's stream (about 35 kB per peer at
// density 0.001, 16 MiB) then crosses a 100 Mbit/s link in three frames,
// not eight: on a host whose cores the ranks share each frame costs
// wake-ups on both ends, and the smaller frames made omni 1.13-1.19x
// allgather's time there (docs/algorithms.md, "Threads and windows").
uint64_t direct_receive_budget_bytes(uint64_t link_rate_bps);

// `senders`: links that feed one receiver; `bytes_per_link`: the most one
// link carries in a call (a dense stream); `link_rate_bps`: 0 when unknown;
// `budget_bytes`: what the receiver keeps in flight over all its links
// (receive_budget_bytes or direct_receive_budget_bytes).
StreamTuning tune_streams(uint64_t link_rate_bps, int senders, uint64_t bytes_per_link, uint64_t budget_bytes);

// How a worker cuts its stream to one shard into batches. The worker scans
// its tensor in pieces of piece_blocks blocks (about 1 MiB), and pieces in
// groups that widen along the tensor: pieces 0 and 1 alone, then 2-3, 4-7,
// and from there groups of kMaxGroupPieces. A batch holds at most
// batch_weight bytes of blocks, each weighed at what it costs alone in the
// encoding policy (block_weight: whole blocks weigh their values, so under
// `blocks` a batch is per_batch blocks), and ends where a group ends: so a
// sparse tensor's first batches leave after one piece is scanned, not once
// a whole batch has been found, its later batches are not a frame per piece
// (at density 0.01 a piece holds a few blocks per shard: frames that small
// made the streams a chain of round trips), and where batches end depends
// only on the data. Under the sparse policies a batch lighter than a quarter
// of batch_weight runs on into the next group: a top-k tensor's pieces hold
// a few hundred bytes each, and a frame per group would cost more in headers
// (and in posts) than waiting for the next scan. A sparse batch may hold many
// more than per_batch blocks (its weight, not its length, is bounded):
// packing it takes room for its non-zeros, not for its blocks' values.
//
// A shard's result batch is weighed the same way, by its sums' non-zeros:
// it ends at batch_weight, or at result_blocks blocks, whichever comes
// first (and where a worker's batch begins, shard_aggregator.h). Under
// blocks that is per_batch blocks. Under the sparse policies a batch may
// hold up to kSparseResultBatches times as many, so that a shard holds at
// most that many frames' worth of dense sums per result slot: capped at
// per_batch, bert-topk's results at block size 256 (about ten non-zeros a
// block) left in frames of a few kB, 20 per shard and worker per call.
struct BatchCut {
  static constexpr uint64_t kMaxGroupPieces = 8;
  static constexpr size_t kSparseResultBatches = 8;
  uint64_t piece_blocks = 1;
  size_t per_batch = 1;         // whole blocks per batch
  uint64_t batch_weight = 1;    // per_batch whole blocks' values
  bool merge_pieces = false;    // light batches run on across pieces
  size_t result_blocks = 1;     // the most blocks a result batch holds
  uint64_t result_weight = 1;   // the weight that ends a result batch (none under blocks)

  static BatchCut for_blocks(size_t block_bytes, size_t frame_bytes, EncodingPolicy policy);
  uint64_t piece_of(uint64_t block) const { return block / piece_blocks; }
  // The first piece of the group that holds `block`.
  uint64_t group_of(uint64_t block) const { return group_of_piece(piece_of(block)); }
  static uint64_t group_of_piece(uint64_t piece);
  // How many groups `pieces` pieces make.
  static uint64_t groups_in(uint64_t pieces);
  // What a block of `length` elements, `nonzeros` of them non-zero, weighs
  // under `policy` (`nonzeros` is not looked at under blocks). Offsets weigh
  // 16 bits each and their share of the page counts: the width a batch of
  // more than a few non-zeros per page takes (a sparser one, sent 32 bits
  // wide, runs up to (4 + e) / (2 + e) of its frame's weight).
  static uint64_t block_weight(EncodingPolicy policy, uint64_t length, uint64_t nonzeros, size_t elem_size);
  // Whether `block` opens a new batch after `last` (the batch's last block),
  // which weighs `held_weight`.
  bool starts_new(uint64_t last, uint64_t block, uint64_t held_weight) const {
    return starts_new_after(held_weight, group_of(block) == group_of(last));
  }
  // The same, told whether the two blocks share a group: a walk over
  // increasing blocks knows that from group_end, without a division per block.
  bool starts_new_after(uint64_t held_weight, bool same_group) const {
    if (held_weight >= batch_weight) return true;
    if (same_group) return false;
    return !merge_pieces || held_weight >= batch_weight / 4;
  }
  // The first block past the group that holds `block`.
  uint64_t group_end(uint64_t block) const;
};

}  // namespace omnib
