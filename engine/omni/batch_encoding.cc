#include "engine/omni/batch_encoding.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/blocks/nonzero_mask.h"

namespace omnib {
namespace {

uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// Walks the blocks' values through the pieces they are given in.
class ValueCursor {
 public:
  explicit ValueCursor(std::span<const iovec> pieces) : pieces_(pieces) {}
  // The next `bytes` bytes, contiguous (copied into scratch if they straddle pieces).
  const uint8_t* take(size_t bytes) {
    while (piece_ < pieces_.size() && offset_ == pieces_[piece_].iov_len) next_piece();
    if (piece_ < pieces_.size() && pieces_[piece_].iov_len - offset_ >= bytes) {
      const auto* p = static_cast<const uint8_t*>(pieces_[piece_].iov_base) + offset_;
      offset_ += bytes;
      return p;
    }
    scratch_.resize(bytes);
    for (size_t got = 0; got < bytes && piece_ < pieces_.size();) {
      const size_t n = std::min(bytes - got, pieces_[piece_].iov_len - offset_);
      std::memcpy(scratch_.data() + got, static_cast<const uint8_t*>(pieces_[piece_].iov_base) + offset_, n);
      got += n;
      offset_ += n;
      if (offset_ == pieces_[piece_].iov_len) next_piece();
    }
    return scratch_.data();
  }
  // Passes over the next `bytes` bytes.
  void skip(size_t bytes) {
    while (bytes > 0 && piece_ < pieces_.size()) {
      const size_t n = std::min(bytes, pieces_[piece_].iov_len - offset_);
      bytes -= n;
      offset_ += n;
      if (offset_ == pieces_[piece_].iov_len) next_piece();
    }
  }

 private:
  void next_piece() {
    ++piece_;
    offset_ = 0;
  }
  std::span<const iovec> pieces_;
  size_t piece_ = 0;
  size_t offset_ = 0;
  std::vector<uint8_t> scratch_;
};

}  // namespace

const char* block_encoding_name(BlockEncoding e) {
  switch (e) {
    case BlockEncoding::kBlocks: return "blocks";
    case BlockEncoding::kBitmap: return "bitmap";
    case BlockEncoding::kCoo: return "coo";
    case BlockEncoding::kCoo16: return "coo16";
  }
  return "?";
}

uint64_t encoded_bytes(BlockEncoding e, const BatchShape& s, size_t elem_size) {
  switch (e) {
    case BlockEncoding::kBlocks: return s.blocks * 8 + s.elements * elem_size;
    case BlockEncoding::kBitmap: return s.blocks * 8 + pad8(s.bitmap_bytes) + s.nonzeros * elem_size;
    case BlockEncoding::kCoo: return 16 + pad8(s.nonzeros * 4) + s.nonzeros * elem_size;
    case BlockEncoding::kCoo16: return 16 + pad8(s.pages() * 4 + s.nonzeros * 2) + s.nonzeros * elem_size;
  }
  return 0;
}

BlockEncoding choose_encoding(EncodingPolicy p, const BatchShape& s, size_t elem_size) {
  if (s.blocks == 0) return BlockEncoding::kBlocks;  // a header alone
  // Offsets are 32 bits from the first element (pages of 16 bits each too).
  const bool coo_fits = !s.empty_block && s.span_end - s.span_begin <= (uint64_t{1} << 32);
  const auto narrower_offsets = [&] {
    return encoded_bytes(BlockEncoding::kCoo16, s, elem_size) < encoded_bytes(BlockEncoding::kCoo, s, elem_size)
               ? BlockEncoding::kCoo16
               : BlockEncoding::kCoo;
  };
  switch (p) {
    case EncodingPolicy::kBlocks: return BlockEncoding::kBlocks;
    case EncodingPolicy::kBitmap: return BlockEncoding::kBitmap;
    case EncodingPolicy::kCoo: return coo_fits ? narrower_offsets() : BlockEncoding::kBitmap;
    case EncodingPolicy::kAuto: break;
  }
  // A sparse encoding costs the sender a pass to pack and the receiver one
  // to expand, where whole blocks are one copy (measured on loopback, 4
  // ranks, density 1: bitmap batches saving 0.4% of the bytes made the call
  // 1.8x slower). So it must save a sixteenth of the blocks' bytes to be taken.
  const uint64_t blocks_bytes = encoded_bytes(BlockEncoding::kBlocks, s, elem_size);
  const uint64_t worth_taking = blocks_bytes - blocks_bytes / kSparseSavingDivisor;
  BlockEncoding best = BlockEncoding::kBlocks;
  uint64_t best_bytes = ~uint64_t{0};
  for (BlockEncoding e : {BlockEncoding::kBitmap, BlockEncoding::kCoo, BlockEncoding::kCoo16}) {  // ties: the first
    if (lists_offsets(e) && !coo_fits) continue;
    const uint64_t bytes = encoded_bytes(e, s, elem_size);
    if (bytes <= worth_taking && bytes < best_bytes) {
      best = e;
      best_bytes = bytes;
    }
  }
  return best;
}

namespace {

// A block's taken elements (positions within it), marked in its bitmap.
void mark_taken(uint8_t* map, const uint32_t* pos, uint32_t count) {
  for (uint32_t k = 0; k < count; ++k) map[pos[k] / 8] |= static_cast<uint8_t>(1u << (pos[k] % 8));
}

// The same as offsets from the batch's first element, the block starting at `from`.
void list_taken(uint32_t*& offs, uint64_t from, const uint32_t* pos, uint32_t count) {
  for (uint32_t k = 0; k < count; ++k) *offs++ = static_cast<uint32_t>(from + pos[k]);
}

// One block's non-zero elements: appended to `vals` (advanced), their
// positions marked in `map` (bitmap) or appended to `offs` (offsets, from
// `base`). T is the element's bits; the sign bit alone is zero.
template <typename T, bool kBitmap>
void pack_block(const uint8_t* src, size_t len, uint8_t* map, uint32_t*& offs, uint64_t base, uint8_t*& vals) {
  for_each_nonzero<T>(src, len, [&](size_t i) {
    if constexpr (kBitmap) {
      map[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    } else {
      *offs++ = static_cast<uint32_t>(base + i);
    }
    std::memcpy(vals, src + i * sizeof(T), sizeof(T));
    vals += sizeof(T);
  });
}

template <typename T>
void pack_block(bool bitmap, const uint8_t* src, size_t len, uint8_t* map, uint32_t*& offs, uint64_t base,
                uint8_t*& vals) {
  if (bitmap)
    pack_block<T, true>(src, len, map, offs, base, vals);
  else
    pack_block<T, false>(src, len, map, offs, base, vals);
}

// The blocks' page count for the 16-bit offsets.
uint64_t pages_of(std::span<const uint64_t> blocks, const BlockLayout& layout) {
  return blocks.empty() ? 0 : offset_pages(layout, blocks.front(), blocks.back());
}

// Where an offsets encoding's packer writes its uint32 offsets: after the
// head, and for 16-bit offsets after the page counts too, so that
// finish_offsets narrows them in place, front to back.
uint64_t offsets_at(BlockEncoding e, uint64_t pages) { return 16 + (e == BlockEncoding::kCoo16 ? 4 * pages : 0); }

// Completes an offsets batch in `out` whose `m` uint32 offsets are at
// offsets_at: the head (the first block, m, and for 16-bit offsets the page
// count), for 16-bit offsets the pages' cumulative counts and the offsets
// narrowed, and the zero padding. `packed_at` is where the values go.
Status finish_offsets(BlockEncoding e, std::span<const uint64_t> blocks, uint64_t pages, uint64_t nonzeros,
                      UninitBytes& out, uint64_t& packed_at) {
  const uint64_t first = blocks.empty() ? 0 : blocks.front();
  const auto m = static_cast<uint32_t>(nonzeros);
  const uint32_t head_word = e == BlockEncoding::kCoo16 ? static_cast<uint32_t>(pages) : 0;
  std::memcpy(out.data(), &first, 8);
  std::memcpy(out.data() + 8, &m, 4);
  std::memcpy(out.data() + 12, &head_word, 4);
  uint64_t listed = nonzeros * 4;  // bytes after the head before the padding
  if (e == BlockEncoding::kCoo16) {
    uint8_t* const ends = out.data() + 16;
    uint8_t* const offs = out.data() + offsets_at(e, pages);
    uint64_t page = 0;
    for (uint32_t k = 0; k < m; ++k) {
      uint32_t off;
      std::memcpy(&off, offs + uint64_t{k} * 4, 4);
      const uint64_t in = off / kOffsetPageElements;
      if (in >= pages)
        return internal_error("omni: an offset of a batch lies past its blocks' " + std::to_string(pages) + " pages");
      for (; page < in; ++page) std::memcpy(ends + page * 4, &k, 4);
      const auto low = static_cast<uint16_t>(off % kOffsetPageElements);
      std::memcpy(offs + uint64_t{k} * 2, &low, 2);  // at or before the offset just read
    }
    for (; page < pages; ++page) std::memcpy(ends + page * 4, &m, 4);
    listed = pages * 4 + nonzeros * 2;
  }
  std::memset(out.data() + 16 + listed, 0, pad8(listed) - listed);
  packed_at = 16 + pad8(listed);
  return Status::ok();
}

}  // namespace

namespace {

// Where pack_blocks writes: a bitmap to or bits into, or offsets to list
// positions in, and the values.
struct PackTarget {
  bool bitmap;
  uint8_t* map;
  uint32_t* offs;
  uint8_t* vals;
  const uint8_t* values_begin;
  size_t elem_size;
  uint64_t found() const { return static_cast<uint64_t>(vals - values_begin) / elem_size; }
};

// Packs `blocks` in order, the ones `taken` holds (taken may be null) from
// their taken elements, until all are packed or more than `nonzeros` found.
void pack_each_block(PackTarget& t, std::span<const uint64_t> blocks, const BlockLayout& layout,
                     const TakenBlocks* taken, ValueCursor& cursor, uint64_t nonzeros) {
  const size_t elem_size = t.elem_size;
  const uint64_t base = blocks.empty() ? 0 : layout.block_begin(blocks.front());
  for (size_t i = 0; i < blocks.size(); ++i) {
    const uint64_t b = blocks[i];
    const size_t len = layout.block_length(b);
    const uint64_t from = layout.block_begin(b) - base;
    if (taken != nullptr && taken->first[i] != FoundElements::kNotTaken) {
      cursor.skip(len * elem_size);
      const uint32_t* pos = taken->positions + taken->first[i];
      const uint32_t count = taken->counts[i];
      if (t.bitmap)
        mark_taken(t.map, pos, count);
      else
        list_taken(t.offs, from, pos, count);
      std::memcpy(t.vals, taken->values + taken->first[i] * elem_size, uint64_t{count} * elem_size);
      t.vals += uint64_t{count} * elem_size;
    } else {
      const uint8_t* src = cursor.take(len * elem_size);
      if (elem_size == 2)
        pack_block<uint16_t>(t.bitmap, src, len, t.map, t.offs, from, t.vals);
      else
        pack_block<uint32_t>(t.bitmap, src, len, t.map, t.offs, from, t.vals);
    }
    if (t.map) t.map += (len + 7) / 8;
    if (t.found() > nonzeros) return;
  }
}

// pack_sparse, with the blocks that `taken` holds copied from it (taken may be null).
Status pack_blocks(BlockEncoding e, std::span<const uint64_t> blocks, const BlockLayout& layout, size_t elem_size,
                   uint64_t nonzeros, const TakenBlocks* taken, std::span<const iovec> values, UninitBytes& out) {
  uint64_t map_bytes = 0, longest = 0;
  for (uint64_t b : blocks) {
    map_bytes += (layout.block_length(b) + 7) / 8;
    longest = std::max<uint64_t>(longest, layout.block_length(b));
  }
  const bool bitmap = e == BlockEncoding::kBitmap;
  const uint64_t pages = bitmap ? 0 : pages_of(blocks, layout);
  // Room for the counted non-zeros and one more block: a block writes at
  // most its length past the last non-zero, so a count that was short is
  // caught after the block that overran it, inside the room.
  const uint64_t room = nonzeros + longest;
  const uint64_t values_at = bitmap ? pad8(map_bytes) : offsets_at(e, pages) + pad8(room * 4);
  out.resize(values_at + room * elem_size);
  // The bitmap is or-ed into; the offsets are written whole (the head, and
  // the padding after them, are filled in at the end).
  if (bitmap) std::memset(out.data(), 0, values_at);
  uint8_t* const values_begin = out.data() + values_at;
  PackTarget target{bitmap, bitmap ? out.data() : nullptr,
                    bitmap ? nullptr : reinterpret_cast<uint32_t*>(out.data() + offsets_at(e, pages)), values_begin,
                    values_begin, elem_size};
  ValueCursor cursor(values);
  pack_each_block(target, blocks, layout, taken, cursor, nonzeros);
  const uint64_t found = target.found();
  if (found != nonzeros)
    return internal_error("omni: a batch was counted with " + std::to_string(nonzeros) + " non-zeros but holds " +
                          (found > nonzeros ? "more" : std::to_string(found)));
  if (bitmap) {
    out.resize(values_at + nonzeros * elem_size);
    return Status::ok();
  }
  // Offsets: the values move down next to the offsets.
  uint64_t packed_at = 0;
  OMNIB_RETURN_IF_ERROR(finish_offsets(e, blocks, pages, nonzeros, out, packed_at));
  std::memmove(out.data() + packed_at, values_begin, nonzeros * elem_size);
  out.resize(packed_at + nonzeros * elem_size);
  return Status::ok();
}

}  // namespace

Status pack_sparse(BlockEncoding e, std::span<const uint64_t> blocks, const BlockLayout& layout, size_t elem_size,
                   uint64_t nonzeros, std::span<const iovec> values, UninitBytes& out) {
  return pack_blocks(e, blocks, layout, elem_size, nonzeros, nullptr, values, out);
}

Status pack_sparse_partly_taken(BlockEncoding e, std::span<const uint64_t> blocks, const BlockLayout& layout,
                                size_t elem_size, uint64_t nonzeros, const TakenBlocks& taken,
                                std::span<const iovec> values, UninitBytes& out) {
  return pack_blocks(e, blocks, layout, elem_size, nonzeros, &taken, values, out);
}

Status pack_sparse_taken(BlockEncoding e, std::span<const uint64_t> blocks, std::span<const uint32_t> counts,
                         const BlockLayout& layout, size_t elem_size, const uint32_t* positions,
                         const uint8_t* values, UninitBytes& out) {
  uint64_t nonzeros = 0, map_bytes = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    nonzeros += counts[i];
    map_bytes += (layout.block_length(blocks[i]) + 7) / 8;
  }
  const uint64_t value_bytes = nonzeros * elem_size;
  if (e == BlockEncoding::kBitmap) {
    out.resize(pad8(map_bytes) + value_bytes);
    std::memset(out.data(), 0, pad8(map_bytes));
    uint8_t* map = out.data();
    const uint32_t* pos = positions;
    for (size_t i = 0; i < blocks.size(); ++i) {
      mark_taken(map, pos, counts[i]);
      pos += counts[i];
      map += (layout.block_length(blocks[i]) + 7) / 8;
    }
    std::memcpy(out.data() + pad8(map_bytes), values, value_bytes);
    return Status::ok();
  }
  const uint64_t pages = pages_of(blocks, layout);
  // The uint32 offsets and then the values' room: narrowing moves nothing up.
  out.resize(offsets_at(e, pages) + pad8(nonzeros * 4) + value_bytes);
  const uint64_t base = blocks.empty() ? 0 : layout.block_begin(blocks.front());
  auto* offs = reinterpret_cast<uint32_t*>(out.data() + offsets_at(e, pages));
  const uint32_t* pos = positions;
  for (size_t i = 0; i < blocks.size(); ++i) {
    list_taken(offs, layout.block_begin(blocks[i]) - base, pos, counts[i]);
    pos += counts[i];
  }
  uint64_t packed_at = 0;
  OMNIB_RETURN_IF_ERROR(finish_offsets(e, blocks, pages, nonzeros, out, packed_at));
  std::memcpy(out.data() + packed_at, values, value_bytes);
  out.resize(packed_at + value_bytes);
  return Status::ok();
}

}  // namespace omnib
