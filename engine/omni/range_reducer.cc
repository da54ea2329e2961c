#include "engine/omni/range_reducer.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/blocks/reduce_ops.h"

namespace omnib {
namespace {

// A range zeroes and sums this many elements at a time (64 KiB of fp32: the
// zeros are still in cache when the holders' elements land).
constexpr uint64_t kRangeChunkElements = 16384;
// A range with fewer elements than cache lines is zeroed in one pass before
// its elements are added.
constexpr uint64_t kCacheLine = 64;

// A range sums a batch's elements by their 32-bit offsets: in the payload,
// or widened from 16 bits by the decoder.
bool has_wide_offsets(const BatchView& v) { return lists_offsets(v.encoding) && v.coo_offsets != nullptr; }

// Whether a worker takes part in a range from block t: it holds t, or its
// next batch is in hand as offsets. Otherwise it may hold its next block, in
// a batch to come, and the range stops there. (Stopping at every
// non-holder's next block cut a top-k tensor at block size 1 into a range
// per few elements, each a turn of the aggregate lane.)
bool joins(const WorkerQueue& w, uint64_t t) {
  if (w.next == t) return true;
  return !w.pending.empty() && w.next != kEndOfStream && has_wide_offsets(w.pending.front().view);
}

}  // namespace

bool RangeReducer::applies(const ShardQueues& queues, uint64_t t, const uint8_t* sums_at) const {
  if (sums_at == nullptr || is_16bit_float(dtype_) || elem_size_ != 4) return false;
  for (const WorkerQueue& w : queues.workers())
    if (w.next == t && !has_wide_offsets(w.pending.front().view)) return false;
  return true;
}

void RangeReducer::reduce(ShardQueues& queues, const BlockLayout& layout, uint64_t t, ResultBatch& out,
                          uint8_t* sums_at, bool want_shapes) {
  const uint64_t end = range_end(queues, layout, t);
  collect_holders(queues, t, end);
  if (want_shapes) result_shapes(layout, t, end, out.range_shapes);
  out.written_from = t;
  out.written_to = end;
  const uint64_t first = layout.block_begin(t);
  const uint64_t last = end < layout.num_blocks() ? layout.block_begin(end) : layout.count();
  sum_elements(first, last, sums_at);
  for (const Holder& x : holders_) queues.consume_until(*x.w, x.block_end);
}

uint64_t RangeReducer::range_end(const ShardQueues& queues, const BlockLayout& layout, uint64_t t) const {
  // Up to where every holder's elements are in hand: the end of its front batch.
  uint64_t end = layout.num_blocks();
  for (const WorkerQueue& w : queues.workers()) end = std::min(end, joins(w, t) ? w.pending.front().view.next : w.next);
  return end;
}

void RangeReducer::collect_holders(ShardQueues& queues, uint64_t t, uint64_t end) {
  holders_.clear();
  for (WorkerQueue& w : queues.workers()) {
    if (!joins(w, t)) continue;
    const PendingBatch& p = w.pending.front();
    const BatchView& v = p.view;
    const auto block_end =
        static_cast<uint32_t>(std::lower_bound(v.indices + p.cursor, v.indices + v.count, end) - v.indices);
    if (block_end == p.cursor) continue;  // its next block is past the range
    holders_.push_back(Holder{&w, &v, p.cursor, block_end, v.first[p.cursor], v.first[block_end]});
    w.between_batches = false;
  }
}

void RangeReducer::sum_elements(uint64_t first, uint64_t last, uint8_t* sums_at) {
  uint64_t elements = 0;  // the holders' in the range
  for (const Holder& x : holders_) elements += x.element_end - x.element;
  if (elements < (last - first) * elem_size_ / kCacheLine) {
    // Fewer elements than cache lines: one zeroing pass (a large one streams
    // past the cache), then each holder's elements in rank order. Zeroing a
    // chunk at a time would pull every line in to touch a few of them.
    std::memset(sums_at + first * elem_size_, 0, (last - first) * elem_size_);
    for (Holder& x : holders_)
      scatter_add(dtype_, sums_at + x.v->coo_base * elem_size_, x.v->coo_offsets + x.element,
                  x.v->values + uint64_t{x.element} * elem_size_, x.element_end - x.element);
    return;
  }
  // A chunk of elements at a time, so that the zeros just written are in
  // cache when the elements land: rank order within every chunk.
  for (uint64_t from = first; from < last; from += kRangeChunkElements) {
    const uint64_t to = std::min(last, from + kRangeChunkElements);
    std::memset(sums_at + from * elem_size_, 0, (to - from) * elem_size_);
    for (Holder& x : holders_) {
      const uint32_t* offs = x.v->coo_offsets;
      const uint64_t base = x.v->coo_base;
      const auto stop =
          static_cast<uint32_t>(std::lower_bound(offs + x.element, offs + x.element_end, to - base) - offs);
      scatter_add(dtype_, sums_at + base * elem_size_, offs + x.element, x.v->values + uint64_t{x.element} * elem_size_,
                  stop - x.element);
      x.element = stop;
    }
  }
}

void RangeReducer::mark_union(uint64_t t, uint64_t end) {
  // Bits: merging the holders' index lists block by block cost more than
  // the sums themselves at small blocks.
  marks_.assign((end - t + 63) / 64, 0);
  for (const Holder& x : holders_)
    for (uint32_t i = x.block; i < x.block_end; ++i) {
      const uint64_t r = x.v->indices[i] - t;
      marks_[r / 64] |= uint64_t{1} << (r % 64);
    }
}

uint64_t RangeReducer::union_blocks(uint64_t t, uint64_t from, uint64_t to) const {
  uint64_t n = 0;
  for (uint64_t r = from - t, stop = to - t; r < stop;) {
    const uint64_t word_end = std::min(stop, (r / 64 + 1) * 64);
    uint64_t word = marks_[r / 64] >> (r % 64);
    if (word_end - r < 64) word &= (uint64_t{1} << (word_end - r)) - 1;
    n += static_cast<uint64_t>(std::popcount(word));
    r = word_end;
  }
  return n;
}

uint64_t RangeReducer::last_union_block(uint64_t t, uint64_t from, uint64_t to) const {
  for (uint64_t r = to - t; r > from - t;) {
    const uint64_t word_begin = std::max(from - t, (r - 1) / 64 * 64);
    uint64_t word = marks_[word_begin / 64] >> (word_begin % 64);
    if (r - word_begin < 64) word &= (uint64_t{1} << (r - word_begin)) - 1;
    if (word != 0) return t + word_begin + 63 - static_cast<uint64_t>(std::countl_zero(word));
    r = word_begin;
  }
  return from;
}

void RangeReducer::result_shapes(const BlockLayout& layout, uint64_t t, uint64_t end, std::vector<BatchShape>& shapes) {
  mark_union(t, end);
  const uint64_t last = layout.num_blocks() - 1;
  const bool last_held = end > last && (marks_[(last - t) / 64] >> ((last - t) % 64) & 1) != 0;
  // The ranges the holders' blocks alone would cut: one from block s runs
  // up to the next block of a holder that does not hold s (the rule of a
  // range whose non-holders' batches are yet to come, so where they fall
  // depends on the data alone, never on which batches have arrived).
  cursors_.clear();
  for (const Holder& x : holders_) cursors_.push_back(x.block);
  for (uint64_t s = t; s < end;) {
    uint64_t e = end;
    for (size_t h = 0; h < holders_.size(); ++h) {
      const Holder& x = holders_[h];
      if (cursors_[h] < x.block_end && x.v->indices[cursors_[h]] > s) e = std::min(e, x.v->indices[cursors_[h]]);
    }
    uint64_t counted = 0, next = end;
    for (size_t h = 0; h < holders_.size(); ++h) {
      const Holder& x = holders_[h];
      uint32_t c = cursors_[h];
      while (c < x.block_end && x.v->indices[c] < e) ++c;
      counted += x.v->first[c] - x.v->first[cursors_[h]];
      cursors_[h] = c;
      if (c < x.block_end) next = std::min(next, x.v->indices[c]);
    }
    BatchShape shape;
    shape.blocks = union_blocks(t, s, e);
    shape.elements = shape.blocks * layout.block_size();
    // The 16-bit offsets' pages: from block s (held) to the union's last block before e.
    const uint64_t last_in_union = last_union_block(t, s, e);
    shape.span_begin = layout.block_begin(s);
    shape.span_end = layout.block_begin(last_in_union) + layout.block_length(last_in_union);
    shape.bitmap_bytes = shape.blocks * ((layout.block_size() + 7) / 8);
    // Only the tensor's last block may be short.
    if (last_held && e > last) {
      const uint64_t len = layout.block_length(last);
      shape.elements -= layout.block_size() - len;
      shape.bitmap_bytes -= (layout.block_size() + 7) / 8 - (len + 7) / 8;
    }
    shape.nonzeros = std::min(counted, shape.elements);
    shapes.push_back(shape);
    s = next;
  }
}

}  // namespace omnib
