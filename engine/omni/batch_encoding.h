// How a batch's block values go on the wire (docs/wire-format.md). Blocks
// win when non-zeros come in blocks; when they are scattered (top-k
// gradients) a non-zero block holds a few non-zeros among many zeros, and a
// bitmap of them, or a list of element offsets, is smaller. The sender picks
// per batch, from the non-zero counts the scan already has, the encoding
// that makes the batch smallest (ties: blocks, then bitmap, then offsets);
// the aggregator merges any mix, and picks again for its results. Like the
// scan, the sparse encodings take -0.0 for zero: it arrives as +0.0 (which
// is what an exact sum gives: every rank's zeros are added to +0.0).
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/block_layout.h"
#include "engine/encoding_policy.h"
#include "engine/found_elements.h"
#include "engine/status.h"
#include "engine/uninit_buffer.h"

namespace omnib {

enum class BlockEncoding : uint8_t {
  kBlocks = 0,  // uint64 index[count], every block's values whole
  kBitmap = 1,  // uint64 index[count], a bitmap per block, the non-zero values
  kCoo = 2,     // the first block, then uint32 element offsets and the non-zero values
};

const char* block_encoding_name(BlockEncoding e);

// The sizes that decide a batch's encoding.
struct BatchShape {
  uint64_t blocks = 0;
  uint64_t elements = 0;      // in those blocks
  uint64_t nonzeros = 0;      // of those elements
  uint64_t bitmap_bytes = 0;  // sum over blocks of ceil(length / 8)
  bool empty_block = false;   // some block has no non-zero (only results: a sum that cancelled)

  void add_block(uint64_t length, uint64_t block_nonzeros) {
    ++blocks;
    elements += length;
    nonzeros += block_nonzeros;
    bitmap_bytes += (length + 7) / 8;
    empty_block |= block_nonzeros == 0;
  }
};

// Payload bytes after the batch header.
uint64_t encoded_bytes(BlockEncoding e, const BatchShape& s, size_t elem_size);

// A sparse encoding is chosen by `auto` only when it saves at least
// 1/kSparseSavingDivisor of the whole blocks' bytes (packing and expanding
// cost CPU that a copy does not).
inline constexpr uint64_t kSparseSavingDivisor = 16;

// The encoding a batch of this shape is sent in: with `auto`, the smallest
// sparse encoding that saves enough, else whole blocks. Offsets cannot carry
// a block without non-zeros (the block would vanish from the stream), so such
// batches fall back to the bitmap.
BlockEncoding choose_encoding(EncodingPolicy p, const BatchShape& s, size_t elem_size);

// Builds what follows the index array (bitmap) or the header (offsets) of a
// batch of `blocks`, whose values are `values` (the blocks' whole values, in
// order, in any number of pieces) and hold `nonzeros` non-zero elements (as
// the scan counts them), into `out`, which grows to about the encoded size:
// a batch's memory follows its non-zeros, not its blocks' length. A count
// that disagrees with the values is an internal error. Not for kBlocks,
// which is sent straight from `values`.
Status pack_sparse(BlockEncoding e, std::span<const uint64_t> blocks, const BlockLayout& layout, size_t elem_size,
                   uint64_t nonzeros, std::span<const iovec> values, UninitBytes& out);

// The elements the scan took of a batch's blocks (engine/found_elements.h):
// block i's counts[i] elements start at first[i] in positions (within the
// block) and values, or first[i] is FoundElements::kNotTaken.
struct TakenBlocks {
  std::span<const uint64_t> first;
  std::span<const uint32_t> counts;
  const uint32_t* positions;
  const uint8_t* values;
};

// pack_sparse for a batch whose blocks were taken in part: taken blocks are
// copied from `taken` (their bytes in `values` are skipped), the others
// packed from `values`. One block too dense to take no longer sends the
// whole batch back to the tensor.
Status pack_sparse_partly_taken(BlockEncoding e, std::span<const uint64_t> blocks, const BlockLayout& layout,
                                size_t elem_size, uint64_t nonzeros, const TakenBlocks& taken,
                                std::span<const iovec> values, UninitBytes& out);

// The same bytes as pack_sparse, for a batch whose blocks' non-zero
// elements the scan took (engine/found_elements.h): block i's counts[i]
// elements are next in `positions` (within the block) and `values`, from
// the batch's first block on. No pass over the tensor.
void pack_sparse_taken(BlockEncoding e, std::span<const uint64_t> blocks, std::span<const uint32_t> counts,
                       const BlockLayout& layout, size_t elem_size, const uint32_t* positions, const uint8_t* values,
                       UninitBytes& out);

}  // namespace omnib
