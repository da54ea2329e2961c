// Where a worker's tensors meet the wire. The omni protocol is the same for
// host and device tensors; only two steps differ, and they live behind this
// seam: finding and addressing the blocks a worker sends (host tensors are
// scanned and sent straight from memory; device tensors are compacted into
// pinned staging), and writing the reduced blocks into the output.
//
// The engine's send lane calls the send half (find, value_iovecs); its
// receive lane calls the receive half (begin_receive, store, finish_receive).
// The two halves run concurrently; calls within one half are serialized.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/blocks/block_layout.h"
#include "engine/blocks/found_elements.h"
#include "engine/omni/block_batch.h"
#include "engine/blocks/shard_map.h"
#include "engine/base/status.h"
#include "engine/base/tensor.h"

namespace omnib {

class WorkerBlockIo {
 public:
  virtual ~WorkerBlockIo() = default;

  // Before the lanes start: this collective's tensors, their layout and how
  // blocks map to shards (at most the factory's count: a small tensor uses
  // only some, ShardMap::active_shards; the direct route one, whose single
  // result stream covers the whole tensor).
  virtual Status begin(const TensorView& in, const TensorView& out, const BlockLayout& layout,
                       const ShardMap& shards) = 0;

  // Send half. Appends to `found`, in increasing order, the blocks among
  // [from, to) that this worker sends: its non-zero blocks, or every block
  // when `dense`. The engine calls it over adjacent, increasing pieces of the
  // tensor, so that sending starts before the whole tensor is looked at. The
  // values of found blocks stay addressable until the next begin(). With
  // `nonzeros`, appends each found block's count of non-zero elements too
  // (what the batch encoding is chosen from).
  virtual Status find(uint64_t from, uint64_t to, bool dense, std::vector<uint64_t>& found,
                      std::vector<uint32_t>* nonzeros) = 0;
  // find() with non-zero counts, which may also take the found blocks'
  // non-zero elements (engine/blocks/found_elements.h): `taken.first` gets one
  // entry per found block, kNotTaken where the elements were not taken. The
  // default takes none.
  virtual Status find_taking(uint64_t from, uint64_t to, std::vector<uint64_t>& found, std::vector<uint32_t>& nonzeros,
                             FoundElements& taken);
  // Appends iovecs covering the values of `blocks` (found earlier), in order.
  virtual void value_iovecs(std::span<const uint64_t> blocks, std::vector<iovec>& out) = 0;

  // Receive half: the reduced blocks of every shard arrive as batches, each
  // shard's in increasing index order. Blocks that never arrive are zero in
  // the result (in place they are zero in the input already).
  virtual Status begin_receive() = 0;
  virtual Status store(int shard, const BatchView& batch) = 0;
  // The shard's stream has ended: its remaining blocks are final.
  virtual Status finish_receive(int shard) = 0;

  // For a rank that sums whole blocks itself (the direct route): the
  // output's memory, when it is host memory that sums may be written into
  // directly (saving a copy per block); null otherwise, and then only
  // store() takes results. Blocks summed there are passed to
  // stored_in_place, in increasing order like store's, which writes the
  // blocks between them.
  virtual uint8_t* host_output() { return nullptr; }
  virtual Status stored_in_place(int shard, std::span<const uint64_t> blocks);
  // The same for blocks [from, to), every element of which was written
  // there, zeros included.
  virtual Status stored_range_in_place(int shard, uint64_t from, uint64_t to);
};

inline Status WorkerBlockIo::find_taking(uint64_t from, uint64_t to, std::vector<uint64_t>& found,
                                         std::vector<uint32_t>& nonzeros, FoundElements& taken) {
  const size_t before = found.size();
  OMNIB_RETURN_IF_ERROR(find(from, to, false, found, &nonzeros));
  taken.first.insert(taken.first.end(), found.size() - before, FoundElements::kNotTaken);
  return Status::ok();
}

inline Status WorkerBlockIo::stored_in_place(int, std::span<const uint64_t>) {
  return internal_error("omni: this block IO has no host output to sum into");
}

inline Status WorkerBlockIo::stored_range_in_place(int, uint64_t, uint64_t) {
  return internal_error("omni: this block IO has no host output to sum into");
}

// Builds the IO of one collective instance for `shards` shards.
using WorkerBlockIoFactory = Result<std::unique_ptr<WorkerBlockIo>> (*)(int shards);

}  // namespace omnib
