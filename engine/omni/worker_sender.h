// A worker's send lane in the omni engine: it scans the tensor in pieces,
// deals the found blocks to the shards' streams, cuts each stream into
// batches, encodes them and posts them to every destination as its window
// allows, then waits until the last sends have left (the tensor's memory is
// the caller's again once run() returns).
//
// On the shards route each shard gets its own stream; on the direct route
// every worker gets the one whole-tensor stream, cut and packed once for all
// of them (packed_batches.h). In place on the direct route, a block may be
// overwritten by its sum only once every destination has sent it:
// unsent_from() tells the direct route's aggregation how far that is.
//
// Threads: run() (or begin() and round()) on one lane; unsent_from() from any.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/omni/omni_call.h"
#include "engine/omni/omni_peers.h"
#include "engine/omni/send_stream.h"
#include "engine/omni/worker_block_io.h"
#include "engine/transport/waker.h"

namespace omnib {

class WorkerSender {
 public:
  // `in_place_waker` is told when unsent_from() advances (the direct
  // route's aggregation waits on it).
  WorkerSender(OmniPeers& peers, WorkerBlockIo& io, Waker& in_place_waker, std::chrono::milliseconds timeout);

  // Before the call's lanes start (the direct route's aggregation reads
  // unsent_from() from its first round): this call's streams. `call` must
  // outlive the call.
  void begin(const OmniCall& call);
  // The whole lane, after begin(): every stream sent and finished, or a
  // failure. Waits on `waker`, which the links to the shards tell of
  // finished sends.
  Status run(Waker& waker);
  // One pass of it, for a lane that has other work too: call until sent().
  Status round(bool& moved);
  bool sent() const { return phase_ == Phase::kSent; }
  // Why the lane is stuck, for a timeout.
  std::string stall_message() const;

  // Direct route in place: the first block some destination has not been
  // sent yet (kEndOfStream once every send finished; from the start when
  // nothing waits on it).
  uint64_t unsent_from() const { return unsent_from_.load(std::memory_order_acquire); }

 private:
  enum class Phase { kStreaming, kDraining, kSent };
  using Stream = SendStream;
  struct Batch;

  Stream& stream(int s) { return streams_[static_cast<size_t>(s)]; }
  // A destination's finished sends: its acknowledgements move `acked` (and,
  // in place, its unsent block). Returns the batches every destination has
  // finished, so packed payloads up to there may be reused.
  uint64_t publish_acks();
  // Posts each destination's next batch where its window has room.
  Status post_batches(uint64_t finished_by_all, bool& all_ended, bool& moved);
  // The next batch to `dest`, when the stream's cut has reached it and its
  // window has room; `posted` says whether it went.
  Status post_batch(int dest, uint64_t finished_by_all, bool& posted);
  // Chooses the batch's encoding and, when sparse, packs it once for every
  // destination of the stream. False while a destination that has not
  // finished `finished` batches still sends what held the payload's slot.
  Result<bool> encode_batch(Stream& from, Batch& batch, uint64_t finished, int dest);
  // The batch's blocks' whole values, from the block IO, into values_iov_.
  void whole_values(Batch& batch);
  // In place on the direct route: the least unsent block over destinations.
  void publish_unsent_from();
  // Scans the next piece of the tensor and deals its blocks to the streams.
  Status scan_next_piece(bool& moved);
  // kDraining: whether the last sends have finished (waits on nothing).
  Status drain(bool& moved);

  OmniPeers& peers_;
  WorkerBlockIo& io_;
  Waker& in_place_waker_;
  const std::chrono::milliseconds timeout_;
  const OmniCall* call_ = nullptr;  // this call's, from begin()

  Phase phase_ = Phase::kSent;
  uint64_t scanned_ = 0;   // blocks the scan has looked at this call
  int draining_dest_ = 0;  // a destination whose last sends are unfinished
  std::atomic<uint64_t> unsent_from_{0};

  // Kept between calls, so that a call allocates nothing once warm.
  std::vector<Stream> streams_;  // one per destination
  std::vector<uint64_t> found_scratch_;
  std::vector<uint32_t> nonzeros_scratch_;
  FoundElements taken_scratch_;
  std::vector<iovec> values_iov_;  // a batch's whole blocks, before packing
  std::vector<iovec> send_iov_;
};

}  // namespace omnib
