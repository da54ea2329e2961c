// How a batch's block values go on the wire (docs/wire-format.md). Blocks
// win when non-zeros come in blocks; when they are scattered (top-k
// gradients) a non-zero block holds a few non-zeros among many zeros, and a
// bitmap of them, or a list of element offsets, is smaller. Offsets come in
// two widths: 32 bits from the batch's first element, or 16 bits within
// pages of 64 Ki elements, each page's count listed once (a top-k batch's
// pages hold hundreds of non-zeros each, so its offsets cost half). The
// sender picks per batch, from the non-zero counts the scan already has and
// the blocks' span, the encoding that makes the batch smallest (ties:
// blocks, then bitmap, then 32-bit offsets, then 16-bit);
// the aggregator merges any mix, and picks again for its results. Like the
// scan, the sparse encodings take -0.0 for zero: it arrives as +0.0 (which
// is what an exact sum gives: every rank's zeros are added to +0.0).
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/blocks/block_layout.h"
#include "engine/omni/settings/encoding_policy.h"
#include "engine/blocks/found_elements.h"
#include "engine/base/status.h"
#include "engine/base/uninit_buffer.h"

namespace omnib {

enum class BlockEncoding : uint8_t {
  kBlocks = 0,  // uint64 index[count], every block's values whole
  kBitmap = 1,  // uint64 index[count], a bitmap per block, the non-zero values
  kCoo = 2,     // the first block, then uint32 element offsets and the non-zero values
  kCoo16 = 3,   // the first block, a count per 64 Ki-element page, uint16 offsets within pages, the values
};

// The 16-bit offsets' page: element offsets from the batch's first element
// are page * kOffsetPageElements + a 16-bit offset within the page.
inline constexpr uint64_t kOffsetPageElements = uint64_t{1} << 16;

// The pages a batch whose blocks span `span_elements` elements (from its
// first block's first element to its last block's end) lists.
inline uint64_t offset_pages(uint64_t span_elements) {
  return span_elements == 0 ? 0 : (span_elements - 1) / kOffsetPageElements + 1;
}
// The same for a batch whose first and last blocks are `first` and `last`.
inline uint64_t offset_pages(const BlockLayout& layout, uint64_t first, uint64_t last) {
  return offset_pages(layout.block_begin(last) + layout.block_length(last) - layout.block_begin(first));
}

// Whether an encoding lists element offsets (and so carries no block indices).
inline bool lists_offsets(BlockEncoding e) { return e == BlockEncoding::kCoo || e == BlockEncoding::kCoo16; }

const char* block_encoding_name(BlockEncoding e);

// The sizes that decide a batch's encoding.
struct BatchShape {
  uint64_t blocks = 0;
  uint64_t elements = 0;      // in those blocks
  uint64_t nonzeros = 0;      // of those elements
  uint64_t bitmap_bytes = 0;  // sum over blocks of ceil(length / 8)
  bool empty_block = false;   // some block has no non-zero (only results: a sum that cancelled)
  // Elements from the first block's first to the last block's end (blocks
  // are added in increasing order): what the 16-bit offsets' pages cover.
  uint64_t span_begin = 0;
  uint64_t span_end = 0;

  // The block whose elements are [begin, begin + length).
  void add_block(uint64_t begin, uint64_t length, uint64_t block_nonzeros) {
    if (blocks == 0) span_begin = begin;
    span_end = begin + length;
    ++blocks;
    elements += length;
    nonzeros += block_nonzeros;
    bitmap_bytes += (length + 7) / 8;
    empty_block |= block_nonzeros == 0;
  }
  uint64_t pages() const { return blocks == 0 ? 0 : offset_pages(span_end - span_begin); }
};

// Payload bytes after the batch header.
uint64_t encoded_bytes(BlockEncoding e, const BatchShape& s, size_t elem_size);

// A sparse encoding is chosen by `auto` only when it saves at least
// 1/kSparseSavingDivisor of the whole blocks' bytes (packing and expanding
// cost CPU that a copy does not).
inline constexpr uint64_t kSparseSavingDivisor = 16;

// The encoding a batch of this shape is sent in: with `auto`, the smallest
// sparse encoding that saves enough, else whole blocks; with `coo`, the
// smaller offsets width. Offsets cannot carry a block without non-zeros (the
// block would vanish from the stream), so such batches fall back to the
// bitmap.
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

// The elements the scan took of a batch's blocks (engine/blocks/found_elements.h):
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
// packed from `values`. One block too dense to take does not send the whole
// batch back to the tensor.
Status pack_sparse_partly_taken(BlockEncoding e, std::span<const uint64_t> blocks, const BlockLayout& layout,
                                size_t elem_size, uint64_t nonzeros, const TakenBlocks& taken,
                                std::span<const iovec> values, UninitBytes& out);

// The same bytes as pack_sparse, for a batch whose blocks' non-zero
// elements the scan took (engine/blocks/found_elements.h): block i's counts[i]
// elements are next in `positions` (within the block) and `values`, from
// the batch's first block on. No pass over the tensor.
Status pack_sparse_taken(BlockEncoding e, std::span<const uint64_t> blocks, std::span<const uint32_t> counts,
                         const BlockLayout& layout, size_t elem_size, const uint32_t* positions,
                         const uint8_t* values, UninitBytes& out);

}  // namespace omnib
