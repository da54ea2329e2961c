// Where a worker's tensors meet the wire. The omni protocol is the same for
// host and device tensors; only two steps differ, and they live behind this
// seam: listing and addressing the blocks a worker sends (host tensors are
// sent straight from memory; device tensors are first compacted into pinned
// staging), and writing the reduced blocks into the output.
//
// One lane per shard calls the send half (stage, value_iovecs) and another the
// receive half (begin_receive, store, finish_receive): calls for different
// shards run concurrently; calls for one shard and one half are serialized.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/block_layout.h"
#include "engine/omni/block_batch.h"
#include "engine/status.h"
#include "engine/tensor.h"

namespace omnib {

class WorkerBlockIo {
 public:
  virtual ~WorkerBlockIo() = default;

  // Before the lanes start: this collective's tensors and their layout.
  virtual Status begin(const TensorView& in, const TensorView& out, const BlockLayout& layout) = 0;

  // Send half. Lists the blocks of `range` this worker sends (its non-zero
  // blocks, or every block when `dense`), in increasing index order, and makes
  // their values addressable until the next begin().
  virtual Result<std::span<const uint64_t>> stage(int shard, BlockRange range, bool dense) = 0;
  // Appends iovecs covering the values of staged blocks [pos, pos + n) of
  // `shard`, in order.
  virtual void value_iovecs(int shard, size_t pos, size_t n, std::vector<iovec>& out) = 0;

  // Receive half: the reduced blocks of `range` arrive as batches in
  // increasing index order; blocks that never arrive are zero in the result.
  virtual Status begin_receive(int shard, BlockRange range) = 0;
  virtual Status store(int shard, const BatchView& batch) = 0;
  virtual Status finish_receive(int shard, BlockRange range) = 0;
};

// Builds the IO of one collective instance for `shards` shards.
using WorkerBlockIoFactory = Result<std::unique_ptr<WorkerBlockIo>> (*)(int shards);

}  // namespace omnib
