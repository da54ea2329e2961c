// The block batch: payload of kBlocks and kResult frames (docs/wire-format.md).
//
//   BatchHeader | uint64 index[count] | block values, in index order
//
// Every block is block_size elements except the tensor's last, which may be
// short. `next` is the look-ahead: the index of the sender's first block in
// its following batch, or kEndOfStream when this batch is the stream's last.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <vector>

#include "engine/block_layout.h"
#include "engine/shard_map.h"
#include "engine/status.h"

namespace omnib {

constexpr uint64_t kEndOfStream = ~uint64_t{0};

struct BatchHeader {
  uint32_t count;     // blocks in this batch
  uint32_t reserved;  // zero
  uint64_t next;      // look-ahead index, or kEndOfStream
};
static_assert(sizeof(BatchHeader) == 16);

// A decoded batch that points into a received frame's payload.
struct BatchView {
  uint32_t count = 0;
  uint64_t next = kEndOfStream;
  const uint64_t* indices = nullptr;
  const uint8_t* values = nullptr;
  std::vector<size_t> value_offsets;  // byte offset of each block's values
};

// Checks and decodes `payload` (indices strictly increasing, all owned by
// `shard` of `shards`, lengths matching the layout). The view borrows `payload`.
Status decode_batch(std::span<const uint8_t> payload, const BlockLayout& layout, size_t elem_size,
                    const ShardMap& shards, int shard, BatchView& out);

// Starts the iovec list of a batch: its header and index array. The values
// follow (WorkerBlockIo::value_iovecs). `header` and `indices` must outlive
// the send.
void batch_prefix_iovecs(const BatchHeader& header, std::span<const uint64_t> indices, std::vector<iovec>& out);

// Bytes a batch of these blocks occupies on the wire, frame header included.
uint64_t batch_wire_bytes(uint64_t blocks, uint64_t value_bytes);

}  // namespace omnib
