// The block batch: payload of kBlocks and kResult frames (docs/wire-format.md).
//
//   BatchHeader | the blocks, in the batch's encoding (engine/omni/batch_encoding.h):
//     blocks:  uint64 index[count] | every block's values, whole
//     bitmap:  uint64 index[count] | a bitmap per block (ceil(len/8) bytes), padded to 8 | the non-zero values
//     offsets: uint64 first block | uint32 m | uint32 0 | uint32 offset[m] from the first block's
//              first element, padded to 8 | the m values
//     offsets16: uint64 first block | uint32 m | uint32 pages | uint32 end[pages] (the offsets
//              below each page's end, cumulative) | uint16 offset[m] within its page, padded
//              to 8 | the m values (an offset is page * 65536 + its 16 bits)
//
// Every block is block_size elements except the tensor's last, which may be
// short. `next` is the look-ahead: the index of the sender's first block in
// its following batch, or kEndOfStream when this batch is the stream's last.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <vector>

#include "engine/blocks/block_layout.h"
#include "engine/omni/batch_encoding.h"
#include "engine/blocks/shard_map.h"
#include "engine/base/status.h"

namespace omnib {

constexpr uint64_t kEndOfStream = ~uint64_t{0};

struct BatchHeader {
  uint32_t count;     // blocks in this batch
  uint32_t encoding;  // BlockEncoding
  uint64_t next;      // look-ahead index, or kEndOfStream
};
static_assert(sizeof(BatchHeader) == 16);

// A decoded batch that points into a received frame's payload (and, for
// the offsets encoding, into its own derived index list).
struct BatchView {
  uint32_t count = 0;
  uint64_t next = kEndOfStream;
  BlockEncoding encoding = BlockEncoding::kBlocks;
  const uint64_t* indices = nullptr;
  const uint8_t* values = nullptr;
  // Blocks: byte offset of each block's values.
  std::vector<size_t> value_offsets;
  // Bitmap and offsets: block i's non-zero values are elements first[i] to
  // first[i + 1] of `values`, at positions[first[i] ...] within the block.
  std::vector<uint32_t> first;
  std::vector<uint32_t> positions;
  std::vector<uint64_t> derived_indices;  // offsets: the blocks, found from the offsets
  std::vector<uint32_t> derived_offsets;  // 16-bit offsets, widened to 32
  // Offsets: element k is element coo_base + coo_offsets[k] of the tensor
  // (into the payload, or derived_offsets for 16-bit offsets; null where
  // the payload leaves 32-bit offsets unaligned).
  const uint32_t* coo_offsets = nullptr;
  uint64_t coo_base = 0;

  bool sparse() const { return encoding != BlockEncoding::kBlocks; }
  // Block i's values, whole: `len` elements of elem_size bytes into `dst`.
  void write_block(uint32_t i, size_t len, size_t elem_size, uint8_t* dst) const;
  // A sparse batch's non-zero elements of blocks [from, to), each at its
  // place in `tensor`; nothing else is written (the caller zeroed the blocks).
  void place_elements(uint32_t from, uint32_t to, const BlockLayout& layout, size_t elem_size, uint8_t* tensor) const;
};

// Checks and decodes `payload` (a known encoding, indices strictly
// increasing, all owned by `shard` of `shards`, lengths matching the layout,
// padding zero). The view borrows `payload`.
Status decode_batch(std::span<const uint8_t> payload, const BlockLayout& layout, size_t elem_size,
                    const ShardMap& shards, int shard, BatchView& out);

// Starts the iovec list of a batch: its header and, unless the header says
// offsets, its index array. Then come the values (WorkerBlockIo::value_iovecs)
// or what pack_sparse built. Everything must outlive the send.
void batch_prefix_iovecs(const BatchHeader& header, std::span<const uint64_t> indices, std::vector<iovec>& out);

// A whole batch's iovecs: the prefix, then `values` (whole blocks) or
// `packed` (a sparse encoding), as the header says.
void batch_iovecs(const BatchHeader& header, std::span<const uint64_t> blocks, std::span<const iovec> values,
                  const UninitBytes* packed, std::vector<iovec>& out);

// Bytes a batch of these blocks occupies on the wire, frame header included.
uint64_t batch_wire_bytes(uint64_t blocks, uint64_t value_bytes);

}  // namespace omnib
