#include "engine/omni/block_batch.h"

#include <bit>
#include <cstring>
#include <string>

#include "engine/transport/frame_format.h"

namespace omnib {
namespace {

uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i]) return false;
  return true;
}

Status size_mismatch(size_t got, uint64_t want) {
  return unavailable_error("block batch size " + std::to_string(got) + " does not match its blocks (" +
                           std::to_string(want) + " bytes)");
}

// The index array of the blocks and bitmap encodings.
Status read_indices(std::span<const uint8_t> payload, const BatchHeader& h, BatchView& out) {
  const uint64_t index_bytes = uint64_t{h.count} * sizeof(uint64_t);
  if (payload.size() < sizeof(BatchHeader) + index_bytes)
    return unavailable_error("block batch announces " + std::to_string(h.count) + " blocks but is too short");
  out.indices = reinterpret_cast<const uint64_t*>(payload.data() + sizeof(BatchHeader));
  return Status::ok();
}

Status decode_blocks(std::span<const uint8_t> payload, const BatchHeader& h, const BlockLayout& layout,
                     size_t elem_size, BatchView& out) {
  OMNIB_RETURN_IF_ERROR(read_indices(payload, h, out));
  const size_t values_at = sizeof(BatchHeader) + h.count * sizeof(uint64_t);
  out.values = payload.data() + values_at;
  out.value_offsets.resize(h.count);
  uint64_t offset = 0;
  for (uint32_t i = 0; i < h.count; ++i) {
    out.value_offsets[i] = offset;
    if (out.indices[i] >= layout.num_blocks()) return unavailable_error("block batch holds a block past the tensor");
    offset += layout.block_length(out.indices[i]) * elem_size;
  }
  if (payload.size() != values_at + offset) return size_mismatch(payload.size(), values_at + offset);
  return Status::ok();
}

Status decode_bitmap(std::span<const uint8_t> payload, const BatchHeader& h, const BlockLayout& layout,
                     size_t elem_size, BatchView& out) {
  OMNIB_RETURN_IF_ERROR(read_indices(payload, h, out));
  const uint8_t* maps = payload.data() + sizeof(BatchHeader) + h.count * sizeof(uint64_t);
  const uint64_t room = payload.size() - sizeof(BatchHeader) - h.count * sizeof(uint64_t);
  uint64_t map_bytes = 0;
  for (uint32_t i = 0; i < h.count; ++i) {
    if (out.indices[i] >= layout.num_blocks()) return unavailable_error("block batch holds a block past the tensor");
    map_bytes += (layout.block_length(out.indices[i]) + 7) / 8;
  }
  if (room < pad8(map_bytes)) return size_mismatch(payload.size(), payload.size() - room + pad8(map_bytes));
  if (!all_zero(maps + map_bytes, pad8(map_bytes) - map_bytes)) return unavailable_error("block batch bitmap padding is not zero");
  // The set bits count the values: the payload's size is checked, and the
  // positions sized, before any is written.
  uint64_t marked = 0;
  for (uint64_t byte = 0; byte < pad8(map_bytes); byte += 8) {
    uint64_t word;
    std::memcpy(&word, maps + byte, 8);
    marked += static_cast<uint64_t>(std::popcount(word));
  }
  const uint64_t values_at = payload.size() - room + pad8(map_bytes);
  if (payload.size() != values_at + marked * elem_size) return size_mismatch(payload.size(), values_at + marked * elem_size);
  out.first.resize(h.count + 1);
  out.positions.resize(marked);
  uint32_t* pos = out.positions.data();
  const uint8_t* map = maps;
  const uint8_t* const maps_end = maps + pad8(map_bytes);
  for (uint32_t i = 0; i < h.count; ++i) {
    const size_t len = layout.block_length(out.indices[i]);
    const size_t bytes = (len + 7) / 8;
    out.first[i] = static_cast<uint32_t>(pos - out.positions.data());
    if (len % 8 != 0 && (map[bytes - 1] >> (len % 8)) != 0)
      return unavailable_error("block batch bitmap marks elements past its block");
    auto take = [&](size_t at, uint64_t bits) {  // the set bits of `bits`, element `at` first
      for (; bits != 0; bits &= bits - 1) *pos++ = static_cast<uint32_t>(at + static_cast<size_t>(std::countr_zero(bits)));
    };
    size_t byte = 0;
    // Eight bytes at a time (bit k of byte j is element 8j + k: on a
    // little-endian host, bit 8j + k of the word); a block of at most 64
    // elements is one word, read past its map into the next one or the
    // padding and masked.
    if constexpr (std::endian::native == std::endian::little) {
      if (bytes < 8 && map + 8 <= maps_end) {
        uint64_t word;
        std::memcpy(&word, map, 8);
        take(0, word & ((uint64_t{1} << (bytes * 8)) - 1));
        byte = bytes;
      }
      for (; byte + 8 <= bytes; byte += 8) {
        uint64_t word;
        std::memcpy(&word, map + byte, 8);
        take(byte * 8, word);
      }
    }
    for (; byte < bytes; ++byte) take(byte * 8, map[byte]);
    map += bytes;
  }
  out.first[h.count] = static_cast<uint32_t>(out.positions.size());
  out.values = payload.data() + values_at;
  return Status::ok();
}

Status offsets_out_of_order(uint64_t element) {
  return unavailable_error("offsets batch holds element " + std::to_string(element) + " out of order or past the tensor");
}

Status offsets_miscounted(const BatchHeader& h, uint64_t first_block, uint64_t blocks) {
  return unavailable_error("offsets batch announces " + std::to_string(h.count) + " blocks from block " +
                           std::to_string(first_block) + " but its offsets hold " + std::to_string(blocks));
}

// decode_offsets at block size 1, where every element is its own block: the
// lists are written without a branch per element, and the checks gathered
// into one flag (the offending element is looked for only when it is set).
Status decode_element_blocks(const uint8_t* offsets, uint32_t m, const BatchHeader& h, const BlockLayout& layout,
                             uint64_t first_block, BatchView& out) {
  if (h.count != m) return offsets_miscounted(h, first_block, m);
  out.derived_indices.resize(m);
  out.first.resize(uint64_t{m} + 1);
  out.positions.assign(m, 0);
  uint64_t* blocks = out.derived_indices.data();
  uint32_t* first = out.first.data();
  const uint64_t count = layout.count();
  bool bad = false;
  uint64_t previous = 0;
  for (uint32_t k = 0; k < m; ++k) {
    uint32_t off;
    std::memcpy(&off, offsets + uint64_t{k} * 4, 4);
    const uint64_t element = first_block + off;
    bad |= element >= count || (k > 0 && element <= previous);
    previous = element;
    blocks[k] = element;
    first[k] = k;
  }
  first[m] = m;
  if (bad) {
    for (uint32_t k = 0; k < m; ++k)
      if (blocks[k] >= count || (k > 0 && blocks[k] <= blocks[k - 1])) return offsets_out_of_order(blocks[k]);
  }
  if (m > 0 && blocks[0] != first_block) return offsets_miscounted(h, first_block, m);
  out.indices = blocks;
  return Status::ok();
}

// decode_offsets past its head, at block sizes above 1.
Status decode_spread_offsets(const uint8_t* offsets, uint32_t m, const BatchHeader& h, const BlockLayout& layout,
                             uint64_t first_block, BatchView& out) {
  const uint64_t base = layout.block_begin(first_block);
  const uint64_t block_size = layout.block_size();
  out.derived_indices.clear();
  out.first.clear();
  out.positions.resize(m);
  uint64_t previous = 0;
  // The block in hand and where it begins and ends: elements come in
  // increasing order, so a division is needed only when a block changes.
  uint64_t block = 0, block_begin = 0, block_end = 0;
  for (uint32_t k = 0; k < m; ++k) {
    uint32_t off;
    std::memcpy(&off, offsets + uint64_t{k} * 4, 4);
    const uint64_t element = base + off;
    if (element >= layout.count() || (k > 0 && element <= previous)) return offsets_out_of_order(element);
    previous = element;
    if (k == 0 || element >= block_end) {
      block = element / block_size;
      block_begin = block * block_size;
      block_end = block_begin + block_size;
      out.derived_indices.push_back(block);
      out.first.push_back(k);
    }
    out.positions[k] = static_cast<uint32_t>(element - block_begin);
  }
  out.first.push_back(m);
  if (out.derived_indices.size() != h.count || (m > 0 && out.derived_indices.front() != first_block))
    return offsets_miscounted(h, first_block, out.derived_indices.size());
  out.indices = out.derived_indices.data();
  return Status::ok();
}

// The 16-bit offsets of a kCoo16 batch widened into `wide` (`pages`
// cumulative counts at `ends`, then m offsets within their pages at `lows`).
Status widen_paged_offsets(const uint8_t* ends, uint32_t pages, const uint8_t* lows, uint32_t m,
                           std::vector<uint32_t>& wide) {
  wide.resize(m);
  uint32_t k = 0;
  for (uint32_t page = 0; page < pages; ++page) {
    uint32_t end;
    std::memcpy(&end, ends + uint64_t{page} * 4, 4);
    if (end < k || end > m) return unavailable_error("offsets batch page counts do not add up to its offsets");
    const uint32_t high = page * static_cast<uint32_t>(kOffsetPageElements);
    for (; k < end; ++k) {
      uint16_t low;
      std::memcpy(&low, lows + uint64_t{k} * 2, 2);
      wide[k] = high | low;
    }
  }
  if (k != m) return unavailable_error("offsets batch page counts do not add up to its offsets");
  return Status::ok();
}

Status decode_offsets(std::span<const uint8_t> payload, const BatchHeader& h, const BlockLayout& layout,
                      size_t elem_size, BatchView& out) {
  if (payload.size() < sizeof(BatchHeader) + 16) return unavailable_error("offsets batch shorter than its counts");
  const uint8_t* p = payload.data() + sizeof(BatchHeader);
  const bool paged = h.encoding == static_cast<uint32_t>(BlockEncoding::kCoo16);
  uint64_t first_block;
  uint32_t m, word;  // word: the page count (16-bit offsets), else reserved
  std::memcpy(&first_block, p, 8);
  std::memcpy(&m, p + 8, 4);
  std::memcpy(&word, p + 12, 4);
  const uint32_t pages = paged ? word : 0;
  // Bytes after the head up to the padding: page counts and offsets.
  const uint64_t listed = paged ? uint64_t{pages} * 4 + uint64_t{m} * 2 : uint64_t{m} * 4;
  const uint64_t want = sizeof(BatchHeader) + 16 + pad8(listed) + uint64_t{m} * elem_size;
  if (!paged && word != 0) return unavailable_error("offsets batch reserved field is not zero");
  if (paged && (pages == 0 || pages > (uint64_t{1} << 32) / kOffsetPageElements))
    return unavailable_error("offsets batch announces " + std::to_string(pages) + " pages");
  if (payload.size() != want) return size_mismatch(payload.size(), want);
  if (first_block >= layout.num_blocks()) return unavailable_error("offsets batch starts past the tensor");
  if (!all_zero(p + 16 + listed, pad8(listed) - listed)) return unavailable_error("offsets batch padding is not zero");
  out.values = p + 16 + pad8(listed);
  const uint8_t* offsets = p + 16;
  if (paged) {
    OMNIB_RETURN_IF_ERROR(widen_paged_offsets(p + 16, pages, p + 16 + uint64_t{pages} * 4, m, out.derived_offsets));
    offsets = reinterpret_cast<const uint8_t*>(out.derived_offsets.data());
  }
  const bool aligned = reinterpret_cast<uintptr_t>(offsets) % alignof(uint32_t) == 0;
  out.coo_offsets = aligned ? reinterpret_cast<const uint32_t*>(offsets) : nullptr;
  const uint64_t base = layout.block_begin(first_block);
  const uint64_t block_size = layout.block_size();
  out.coo_base = base;
  if (block_size == 1) {
    OMNIB_RETURN_IF_ERROR(decode_element_blocks(offsets, m, h, layout, first_block, out));
  } else {
    OMNIB_RETURN_IF_ERROR(decode_spread_offsets(offsets, m, h, layout, first_block, out));
  }
  // The pages are those of the blocks' span, as the sender counts them.
  const uint64_t spanned = offset_pages(layout, first_block, out.indices[h.count - 1]);
  if (paged && pages != spanned)
    return unavailable_error("offsets batch announces " + std::to_string(pages) + " pages for blocks spanning " +
                             std::to_string(spanned));
  return Status::ok();
}

// Elements [from, to) of a sparse batch's values into their block at dst.
// A known element size is a template argument, so each copy is one move, not
// a library call (this loop runs once per non-zero element received); with
// kElem 0 the size is elem_size.
template <size_t kElem>
void expand_elements(const uint32_t* positions, uint32_t from, uint32_t to, const uint8_t* values, uint8_t* dst,
                     size_t elem_size = kElem) {
  const size_t e = kElem ? kElem : elem_size;
  for (uint32_t k = from; k < to; ++k) std::memcpy(dst + positions[k] * e, values + uint64_t{k} * e, e);
}

}  // namespace

void BatchView::write_block(uint32_t i, size_t len, size_t elem_size, uint8_t* dst) const {
  if (!sparse()) {
    std::memcpy(dst, values + value_offsets[i], len * elem_size);
    return;
  }
  std::memset(dst, 0, len * elem_size);
  // The tensors' dtypes are 2 or 4 bytes (dtype_size); any other size the
  // decoder accepts takes the general copy.
  if (elem_size == 2) {
    expand_elements<2>(positions.data(), first[i], first[i + 1], values, dst);
  } else if (elem_size == 4) {
    expand_elements<4>(positions.data(), first[i], first[i + 1], values, dst);
  } else {
    expand_elements<0>(positions.data(), first[i], first[i + 1], values, dst, elem_size);
  }
}

void BatchView::place_elements(uint32_t from, uint32_t to, const BlockLayout& layout, size_t elem_size,
                               uint8_t* tensor) const {
  for (uint32_t i = from; i < to; ++i) {
    uint8_t* dst = tensor + layout.block_begin(indices[i]) * elem_size;
    if (elem_size == 2)
      expand_elements<2>(positions.data(), first[i], first[i + 1], values, dst);
    else if (elem_size == 4)
      expand_elements<4>(positions.data(), first[i], first[i + 1], values, dst);
    else
      expand_elements<0>(positions.data(), first[i], first[i + 1], values, dst, elem_size);
  }
}

Status decode_batch(std::span<const uint8_t> payload, const BlockLayout& layout, size_t elem_size,
                    const ShardMap& shards, int shard, BatchView& out) {
  if (payload.size() < sizeof(BatchHeader)) return unavailable_error("block batch shorter than its header");
  BatchHeader h;
  std::memcpy(&h, payload.data(), sizeof(h));
  out.count = h.count;
  out.next = h.next;
  switch (h.encoding) {
    case static_cast<uint32_t>(BlockEncoding::kBlocks):
      out.encoding = BlockEncoding::kBlocks;
      OMNIB_RETURN_IF_ERROR(decode_blocks(payload, h, layout, elem_size, out));
      break;
    case static_cast<uint32_t>(BlockEncoding::kBitmap):
      out.encoding = BlockEncoding::kBitmap;
      OMNIB_RETURN_IF_ERROR(decode_bitmap(payload, h, layout, elem_size, out));
      break;
    case static_cast<uint32_t>(BlockEncoding::kCoo):
    case static_cast<uint32_t>(BlockEncoding::kCoo16):
      out.encoding = static_cast<BlockEncoding>(h.encoding);
      if (h.count == 0) return unavailable_error("an empty batch must use the blocks encoding");
      OMNIB_RETURN_IF_ERROR(decode_offsets(payload, h, layout, elem_size, out));
      break;
    default:
      return unavailable_error("block batch has unknown encoding " + std::to_string(h.encoding));
  }
  const uint64_t nb = layout.num_blocks();
  auto owned = [&](uint64_t idx) { return idx < nb && shards.owner(idx) == shard; };
  auto misplaced = [&](uint64_t idx) {
    return unavailable_error("block batch holds block " + std::to_string(idx) + " out of order or not of shard " +
                             std::to_string(shard));
  };
  // Indices increase, so ownership is looked up once per run of the shard's
  // blocks: below owned_until, an index is the shard's.
  uint64_t previous = 0, owned_until = 0;
  for (uint32_t i = 0; i < h.count; ++i) {
    const uint64_t idx = out.indices[i];
    if (i > 0 && idx <= previous) return misplaced(idx);
    if (idx >= owned_until) {
      if (!owned(idx)) return misplaced(idx);
      owned_until = shards.run_end(idx);
    }
    previous = idx;
  }
  if (h.count > 0 && h.next != kEndOfStream && h.next <= previous)
    return unavailable_error("block batch look-ahead index does not follow its last block");
  if (h.next != kEndOfStream && !owned(h.next))
    return unavailable_error("block batch look-ahead index is not a block of shard " + std::to_string(shard));
  return Status::ok();
}

void batch_prefix_iovecs(const BatchHeader& header, std::span<const uint64_t> indices, std::vector<iovec>& out) {
  out.clear();
  out.push_back({const_cast<BatchHeader*>(&header), sizeof(BatchHeader)});
  if (!lists_offsets(static_cast<BlockEncoding>(header.encoding)) && !indices.empty())
    out.push_back({const_cast<uint64_t*>(indices.data()), indices.size() * sizeof(uint64_t)});
}

void batch_iovecs(const BatchHeader& header, std::span<const uint64_t> blocks, std::span<const iovec> values,
                  const UninitBytes* packed, std::vector<iovec>& out) {
  batch_prefix_iovecs(header, blocks, out);
  if (header.encoding == static_cast<uint32_t>(BlockEncoding::kBlocks))
    out.insert(out.end(), values.begin(), values.end());
  else if (packed != nullptr && !packed->empty())
    out.push_back({const_cast<uint8_t*>(packed->data()), packed->size()});
}

uint64_t batch_wire_bytes(uint64_t blocks, uint64_t value_bytes) {
  return sizeof(wire::FrameHeader) + sizeof(BatchHeader) + blocks * sizeof(uint64_t) + value_bytes;
}

}  // namespace omnib
