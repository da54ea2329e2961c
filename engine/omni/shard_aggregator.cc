#include "engine/omni/shard_aggregator.h"

#include <algorithm>

#include "engine/blocks/block_scan.h"
#include "engine/blocks/reduce_ops.h"
#include "engine/omni/stream_tuning.h"

namespace omnib {

ShardAggregator::ShardAggregator(int workers, DType dtype)
    : dtype_(dtype), elem_size_(dtype_size(dtype)), wide_(is_16bit_float(dtype)), queues_(workers), ranges_(dtype) {}

void ShardAggregator::reset(const BlockLayout& layout) {
  layout_ = layout;
  if (wide_) wide_sum_.resize(layout.block_size());
  queues_.reset();
}

Status ShardAggregator::push(int worker, Frame frame, BatchView view) {
  return queues_.push(worker, std::move(frame), std::move(view));
}

uint64_t ShardAggregator::global_next() const {
  uint64_t t = kEndOfStream;
  for (const auto& w : queues_.workers()) t = std::min(t, w.next);
  return t;
}

ShardAggregator::Progress ShardAggregator::advance(ResultBatch& out, const ResultLimit& limit, int* waiting_on,
                                                   uint8_t* sums_at) {
  while (true) {
    if (out.indices.size() >= limit.max_blocks || out.weight >= limit.max_weight) return Progress::kFlush;
    uint64_t t = kEndOfStream;
    if (auto stop = next_block(out, waiting_on, t)) return *stop;
    if (ranges_.applies(queues_, t, sums_at)) {
      if (!out.indices.empty()) return Progress::kFlush;  // a range comes back alone
      ranges_.reduce(queues_, layout_, t, out, sums_at, range_shapes_wanted_);
      return Progress::kFlush;
    }
    sum_block(t, out, limit, sums_at);
  }
}

std::optional<ShardAggregator::Progress> ShardAggregator::next_block(const ResultBatch& out, int* waiting_on,
                                                                     uint64_t& t) const {
  // One pass finds the next block (every worker's next must be known), one
  // more what block t waits on: this runs per block emitted.
  const auto& workers = queues_.workers();
  for (size_t i = 0; i < workers.size(); ++i) {
    if (!workers[i].next_known) {
      *waiting_on = static_cast<int>(i);
      return Progress::kNeedInput;
    }
    t = std::min(t, workers[i].next);
  }
  if (t == kEndOfStream) return Progress::kDone;
  // Send what is done before crossing into a worker's next batch: the shard
  // may have to wait there (the old rule flushed only when it did wait,
  // which made frame counts depend on timing).
  bool boundary = false;
  int missing = -1;  // a holder of t whose batch has not arrived
  for (size_t i = 0; i < workers.size(); ++i) {
    const WorkerQueue& w = workers[i];
    if (w.next != t) continue;
    boundary |= w.between_batches;
    if (w.pending.empty() && missing < 0) missing = static_cast<int>(i);
  }
  if (boundary && !out.indices.empty()) return Progress::kFlush;
  if (missing >= 0) {
    *waiting_on = missing;
    return Progress::kNeedInput;
  }
  return std::nullopt;
}

void ShardAggregator::sum_block(uint64_t t, ResultBatch& out, const ResultLimit& limit, uint8_t* sums_at) {
  // Every worker that holds block t has delivered it: sum in rank order.
  const size_t len = layout_.block_length(t);
  uint8_t* dst = nullptr;
  if (sums_at != nullptr) {
    dst = sums_at + layout_.block_begin(t) * elem_size_;
  } else {
    const size_t offset = out.values.size();
    out.values.resize(offset + len * elem_size_);
    dst = out.values.data() + offset;
  }
  int summed = 0;
  uint64_t estimated_count = 0;  // of the holders so far; kUncounted once one sent whole blocks
  for (auto& w : queues_.workers()) {
    if (w.next != t) continue;
    w.between_batches = false;
    const PendingBatch& p = w.pending.front();
    const BatchView& v = p.view;
    add_block(p, len, summed, dst);
    estimated_count = v.sparse() && estimated_count != ResultBatch::kUncounted
                          ? estimated_count + (v.first[p.cursor + 1] - v.first[p.cursor])
                          : ResultBatch::kUncounted;
    ++summed;
    queues_.consume_until(w, p.cursor + 1);
  }
  if (wide_ && summed > 1) narrow_from(dtype_, dst, wide_sum_.data(), len);
  if (limit.policy != EncodingPolicy::kBlocks) {
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

void ShardAggregator::add_block(const PendingBatch& p, size_t len, int summed, uint8_t* dst) {
  const BatchView& v = p.view;
  if (summed == 0) {
    v.write_block(p.cursor, len, elem_size_, dst);
    return;
  }
  // 16-bit types: the sum runs in fp32 and is rounded once (sum_block).
  if (wide_ && summed == 1) widen_into(dtype_, wide_sum_.data(), dst, len);
  if (!v.sparse()) {
    const uint8_t* src = v.values + v.value_offsets[p.cursor];
    if (wide_)
      add_widened(dtype_, wide_sum_.data(), src, len);
    else
      add_into(dtype_, dst, src, len);
    return;
  }
  const uint32_t k = v.first[p.cursor], n = v.first[p.cursor + 1] - k;
  const uint8_t* src = v.values + uint64_t{k} * elem_size_;
  if (wide_)
    scatter_add_widened(dtype_, wide_sum_.data(), v.positions.data() + k, src, n);
  else
    scatter_add(dtype_, dst, v.positions.data() + k, src, n);
}

}  // namespace omnib
