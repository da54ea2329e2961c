#include "engine/omni/shard_aggregator.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "engine/block_scan.h"
#include "engine/omni/stream_tuning.h"
#include "engine/reduce_ops.h"

namespace omnib {
namespace {

// A range reduction zeroes and sums this many elements at a time (64 KiB of
// fp32: the zeros are still in cache when the holders' elements land).
constexpr uint64_t kRangeChunkElements = 16384;
// A range with fewer elements than cache lines is zeroed in one pass before
// its elements are added.
constexpr uint64_t kCacheLine = 64;

// A range sums a batch's elements by their 32-bit offsets: in the payload,
// or widened from 16 bits by the decoder.
bool has_wide_offsets(const BatchView& v) { return lists_offsets(v.encoding) && v.coo_offsets != nullptr; }

}  // namespace

ShardAggregator::ShardAggregator(int workers, DType dtype)
    : dtype_(dtype),
      elem_size_(dtype_size(dtype)),
      wide_(is_16bit_float(dtype)),
      workers_(static_cast<size_t>(workers)) {}

void ShardAggregator::reset(const BlockLayout& layout) {
  layout_ = layout;
  if (wide_) wide_sum_.resize(layout.block_size());
  for (auto& w : workers_) {
    while (!w.pending.empty()) {
      retire(w.pending.front());
      w.pending.pop_front();
    }
    w = WorkerState{};
  }
}

Status ShardAggregator::push(int worker, Frame frame, BatchView view) {
  WorkerState& w = workers_[static_cast<size_t>(worker)];
  ++pushes_;
  const uint64_t first = view.count > 0 ? view.indices[0] : view.next;
  if (w.started && (w.last_announced == kEndOfStream || first != w.last_announced))
    return unavailable_error("worker " + std::to_string(worker) + " sent a batch starting at block " +
                             std::to_string(first) + " after announcing " + std::to_string(w.last_announced));
  w.started = true;
  w.last_announced = view.next;
  if (!w.next_known) {
    w.next = first;
    w.next_known = true;
  }
  if (view.count == 0) {
    spare_frames_.push_back(std::move(frame));
    spare_views_.push_back(std::move(view));
    return Status::ok();
  }
  w.pending.push_back(Pending{std::move(frame), std::move(view), 0});
  return Status::ok();
}

uint64_t ShardAggregator::global_next() const {
  uint64_t t = kEndOfStream;
  for (const auto& w : workers_) t = std::min(t, w.next);
  return t;
}

void ShardAggregator::retire(Pending& p) {
  spare_frames_.push_back(std::move(p.frame));
  spare_views_.push_back(std::move(p.view));
}

BatchView ShardAggregator::take_spare_view() {
  if (spare_views_.empty()) return BatchView{};
  BatchView v = std::move(spare_views_.back());
  spare_views_.pop_back();
  return v;
}

Frame ShardAggregator::take_spare_frame() {
  if (spare_frames_.empty()) return Frame{};
  Frame f = std::move(spare_frames_.back());
  spare_frames_.pop_back();
  return f;
}

void ShardAggregator::consume_until(WorkerState& w, uint32_t cursor) {
  Pending& p = w.pending.front();
  p.cursor = cursor;
  if (p.cursor < p.view.count) {
    w.next = p.view.indices[p.cursor];
    return;
  }
  w.next = p.view.next;
  retire(p);
  w.pending.pop_front();
  w.between_batches = true;
  ++consumed_;
}

bool ShardAggregator::range_applies(uint64_t t, const uint8_t* sums_at) const {
  if (sums_at == nullptr || wide_ || elem_size_ != 4) return false;
  for (const WorkerState& w : workers_)
    if (w.next == t && !has_wide_offsets(w.pending.front().view)) return false;
  return true;
}

void ShardAggregator::range_result_shapes(uint64_t t, uint64_t end, std::vector<BatchShape>& shapes) {
  // The union of the holders' blocks, as bits: merging their index lists
  // block by block cost more than the sums themselves at small blocks.
  range_marks_.assign((end - t + 63) / 64, 0);
  for (const RangeHolder& x : range_holders_)
    for (uint32_t i = x.block; i < x.block_end; ++i) {
      const uint64_t r = x.v->indices[i] - t;
      range_marks_[r / 64] |= uint64_t{1} << (r % 64);
    }
  // The union's blocks in [from, to) of the range.
  auto union_blocks = [&](uint64_t from, uint64_t to) {
    uint64_t n = 0;
    for (uint64_t r = from - t, stop = to - t; r < stop;) {
      const uint64_t word_end = std::min(stop, (r / 64 + 1) * 64);
      uint64_t word = range_marks_[r / 64] >> (r % 64);
      if (word_end - r < 64) word &= (uint64_t{1} << (word_end - r)) - 1;
      n += static_cast<uint64_t>(std::popcount(word));
      r = word_end;
    }
    return n;
  };
  // The union's last block in [from, to), which holds from.
  auto last_union_block = [&](uint64_t from, uint64_t to) {
    for (uint64_t r = to - t; r > from - t;) {
      const uint64_t word_begin = std::max(from - t, (r - 1) / 64 * 64);
      uint64_t word = range_marks_[word_begin / 64] >> (word_begin % 64);
      if (r - word_begin < 64) word &= (uint64_t{1} << (r - word_begin)) - 1;
      if (word != 0) return t + word_begin + 63 - static_cast<uint64_t>(std::countl_zero(word));
      r = word_begin;
    }
    return from;
  };
  const uint64_t last = layout_.num_blocks() - 1;
  const bool last_held = end > last && (range_marks_[(last - t) / 64] >> ((last - t) % 64) & 1) != 0;
  // The ranges the holders' blocks alone would cut: one from block s runs
  // up to the next block of a holder that does not hold s (the rule of a
  // range whose non-holders' batches are yet to come, so where they fall
  // depends on the data alone, never on which batches have arrived).
  std::vector<uint32_t>& at = range_cursors_;
  at.clear();
  for (const RangeHolder& x : range_holders_) at.push_back(x.block);
  for (uint64_t s = t; s < end;) {
    uint64_t e = end;
    for (size_t h = 0; h < at.size(); ++h) {
      const RangeHolder& x = range_holders_[h];
      if (at[h] < x.block_end && x.v->indices[at[h]] > s) e = std::min(e, x.v->indices[at[h]]);
    }
    uint64_t counted = 0, next = end;
    for (size_t h = 0; h < at.size(); ++h) {
      const RangeHolder& x = range_holders_[h];
      uint32_t c = at[h];
      while (c < x.block_end && x.v->indices[c] < e) ++c;
      counted += x.v->first[c] - x.v->first[at[h]];
      at[h] = c;
      if (c < x.block_end) next = std::min(next, x.v->indices[c]);
    }
    BatchShape shape;
    shape.blocks = union_blocks(s, e);
    shape.elements = shape.blocks * layout_.block_size();
    // The 16-bit offsets' pages: from block s (held) to the union's last block before e.
    const uint64_t last_in_union = last_union_block(s, e);
    shape.span_begin = layout_.block_begin(s);
    shape.span_end = layout_.block_begin(last_in_union) + layout_.block_length(last_in_union);
    shape.bitmap_bytes = shape.blocks * ((layout_.block_size() + 7) / 8);
    // Only the tensor's last block may be short.
    if (last_held && e > last) {
      const uint64_t len = layout_.block_length(last);
      shape.elements -= layout_.block_size() - len;
      shape.bitmap_bytes -= (layout_.block_size() + 7) / 8 - (len + 7) / 8;
    }
    shape.nonzeros = std::min(counted, shape.elements);
    shapes.push_back(shape);
    s = next;
  }
}

void ShardAggregator::reduce_range(uint64_t t, ResultBatch& out, uint8_t* sums_at) {
  // Up to where every holder's elements are in hand: the end of its front
  // batch. A worker not holding t joins when its next batch is in hand, as
  // offsets; otherwise it may hold its next block, in a batch to come, and
  // the range stops there. (Stopping at every non-holder's next block cut a
  // top-k tensor at block size 1 into a range per few elements, each a turn
  // of the aggregate lane.)
  auto joins = [t](const WorkerState& w) {
    if (w.next == t) return true;
    return !w.pending.empty() && w.next != kEndOfStream && has_wide_offsets(w.pending.front().view);
  };
  uint64_t end = layout_.num_blocks();
  for (const WorkerState& w : workers_)
    end = std::min(end, joins(w) ? w.pending.front().view.next : w.next);
  // The holders' cursors: blocks [block, block_end) and their elements
  // [element, element_end) in their front batches.
  std::vector<RangeHolder>& holders = range_holders_;
  holders.clear();
  for (WorkerState& w : workers_) {
    if (!joins(w)) continue;
    const Pending& p = w.pending.front();
    const BatchView& v = p.view;
    const uint32_t block_end =
        static_cast<uint32_t>(std::lower_bound(v.indices + p.cursor, v.indices + v.count, end) - v.indices);
    if (block_end == p.cursor) continue;  // its next block is past the range
    holders.push_back(RangeHolder{&w, &v, p.cursor, block_end, v.first[p.cursor], v.first[block_end]});
    w.between_batches = false;
  }
  if (range_shapes_wanted_) range_result_shapes(t, end, out.range_shapes);
  out.written_from = t;
  out.written_to = end;
  const uint64_t first = layout_.block_begin(t);
  const uint64_t last = end < layout_.num_blocks() ? layout_.block_begin(end) : layout_.count();
  uint64_t elements = 0;  // the holders' in the range
  for (const RangeHolder& x : holders) elements += x.element_end - x.element;
  if (elements < (last - first) * elem_size_ / kCacheLine) {
    // Fewer elements than cache lines: one zeroing pass (a large one streams
    // past the cache), then each holder's elements in rank order. Zeroing a
    // chunk at a time would pull every line in to touch a few of them.
    std::memset(sums_at + first * elem_size_, 0, (last - first) * elem_size_);
    for (RangeHolder& x : holders)
      scatter_add(dtype_, sums_at + x.v->coo_base * elem_size_, x.v->coo_offsets + x.element,
                  x.v->values + uint64_t{x.element} * elem_size_, x.element_end - x.element);
  } else {
    // A chunk of elements at a time, so that the zeros just written are in
    // cache when the elements land: rank order within every chunk.
    for (uint64_t from = first; from < last; from += kRangeChunkElements) {
      const uint64_t to = std::min(last, from + kRangeChunkElements);
      std::memset(sums_at + from * elem_size_, 0, (to - from) * elem_size_);
      for (RangeHolder& x : holders) {
        const uint32_t* offs = x.v->coo_offsets;
        const uint64_t base = x.v->coo_base;
        const uint32_t stop = static_cast<uint32_t>(
            std::lower_bound(offs + x.element, offs + x.element_end, to - base) - offs);
        scatter_add(dtype_, sums_at + base * elem_size_, offs + x.element,
                    x.v->values + uint64_t{x.element} * elem_size_, stop - x.element);
        x.element = stop;
      }
    }
  }
  for (const RangeHolder& x : holders) consume_until(*x.w, x.block_end);
}

ShardAggregator::Progress ShardAggregator::advance(ResultBatch& out, const ResultLimit& limit, int* waiting_on,
                                                   uint8_t* sums_at) {
  const bool weigh = limit.policy != EncodingPolicy::kBlocks;
  while (true) {
    if (out.indices.size() >= limit.max_blocks || out.weight >= limit.max_weight) return Progress::kFlush;
    // One pass finds the next block (every worker's next must be known),
    // one more what block t waits on: this loop runs per block emitted.
    uint64_t t = kEndOfStream;
    for (size_t i = 0; i < workers_.size(); ++i) {
      if (!workers_[i].next_known) {
        *waiting_on = static_cast<int>(i);
        return Progress::kNeedInput;
      }
      t = std::min(t, workers_[i].next);
    }
    if (t == kEndOfStream) return Progress::kDone;
    // Send what is done before crossing into a worker's next batch: the
    // shard may have to wait there (the old rule flushed only when it did
    // wait, which made frame counts depend on timing).
    bool boundary = false;
    int missing = -1;  // a holder of t whose batch has not arrived
    for (size_t i = 0; i < workers_.size(); ++i) {
      const WorkerState& w = workers_[i];
      if (w.next != t) continue;
      boundary |= w.between_batches;
      if (w.pending.empty() && missing < 0) missing = static_cast<int>(i);
    }
    if (boundary && !out.indices.empty()) return Progress::kFlush;
    if (missing >= 0) {
      *waiting_on = missing;
      return Progress::kNeedInput;
    }
    if (range_applies(t, sums_at)) {
      if (!out.indices.empty()) return Progress::kFlush;  // a range comes back alone
      reduce_range(t, out, sums_at);
      return Progress::kFlush;
    }
    // Every worker that holds block t has delivered it: sum in rank order.
    const size_t len = layout_.block_length(t);
    const size_t len_bytes = len * elem_size_;
    uint8_t* dst = nullptr;
    if (sums_at != nullptr) {
      dst = sums_at + layout_.block_begin(t) * elem_size_;
    } else {
      const size_t offset = out.values.size();
      out.values.resize(offset + len_bytes);
      dst = out.values.data() + offset;
    }
    int summed = 0;
    uint64_t estimated_count = 0;  // of the holders so far; kUncounted once one sent whole blocks
    for (auto& w : workers_) {
      if (w.next != t) continue;
      w.between_batches = false;
      Pending& p = w.pending.front();
      const BatchView& v = p.view;
      if (summed == 0) {
        v.write_block(p.cursor, len, elem_size_, dst);
      } else {
        // 16-bit types: the sum runs in fp32 and is rounded once, below.
        if (wide_ && summed == 1) widen_into(dtype_, wide_sum_.data(), dst, len);
        if (!v.sparse()) {
          const uint8_t* src = v.values + v.value_offsets[p.cursor];
          if (wide_)
            add_widened(dtype_, wide_sum_.data(), src, len);
          else
            add_into(dtype_, dst, src, len);
        } else {
          const uint32_t k = v.first[p.cursor], n = v.first[p.cursor + 1] - k;
          const uint8_t* src = v.values + uint64_t{k} * elem_size_;
          if (wide_)
            scatter_add_widened(dtype_, wide_sum_.data(), v.positions.data() + k, src, n);
          else
            scatter_add(dtype_, dst, v.positions.data() + k, src, n);
        }
      }
      estimated_count = v.sparse() && estimated_count != ResultBatch::kUncounted
                            ? estimated_count + (v.first[p.cursor + 1] - v.first[p.cursor])
                            : ResultBatch::kUncounted;
      ++summed;
      consume_until(w, p.cursor + 1);
    }
    if (wide_ && summed > 1) narrow_from(dtype_, dst, wide_sum_.data(), len);
    if (weigh) {
      // The sum is in cache: its count weighs it now and later picks the encoding.
      const auto nonzeros = static_cast<uint32_t>(count_nonzero(dst, len, elem_size_));
      out.nonzeros.push_back(nonzeros);
      out.weight += BatchCut::block_weight(limit.policy, len, nonzeros, elem_size_);
    }
    out.indices.push_back(t);
    out.estimated_counts.push_back(estimated_count == ResultBatch::kUncounted
                                       ? ResultBatch::kUncounted
                                       : static_cast<uint32_t>(std::min<uint64_t>(estimated_count, len)));
  }
}

}  // namespace omnib
