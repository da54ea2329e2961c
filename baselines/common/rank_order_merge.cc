#include "baselines/common/rank_order_merge.h"

#include <algorithm>
#include <cstring>

#include "baselines/common/sparse_vector.h"
#include "engine/blocks/reduce_ops.h"

namespace omnib {
namespace {

// acc += own, skipping runs of +0 (all bits clear), which cannot change a
// sum that started at +0. Sparse inputs are mostly such runs: a group is
// tested with one wide OR (it vectorizes) and added only when it holds a
// value. Elements are read as words of type W (their size).
template <typename W>
void add_nonzero_words(DType dtype, W* acc, const W* own, size_t n) {
  constexpr size_t kGroup = 16;
  size_t i = 0;
  for (; i + kGroup <= n; i += kGroup) {
    W any = 0;
    for (size_t j = 0; j < kGroup; ++j) any |= own[i + j];
    if (any != 0) add_into(dtype, acc + i, own + i, kGroup);
  }
  add_into(dtype, acc + i, own + i, n - i);
}

void add_nonzero_runs(DType dtype, void* acc, const void* own, size_t n) {
  if (dtype_size(dtype) == 2)
    add_nonzero_words(dtype, static_cast<uint16_t*>(acc), static_cast<const uint16_t*>(own), n);
  else
    add_nonzero_words(dtype, static_cast<uint32_t*>(acc), static_cast<const uint32_t*>(own), n);
}

}  // namespace

Result<bool> RankOrderMerge::fetch(Stream& s, size_t index, const FrameObserver& on_frame) {
  auto got = s.source.link->try_recv(s.frame);
  if (!got.is_ok()) return got.status();
  if (!got.value()) return false;
  OMNIB_RETURN_IF_ERROR(s.reader->next(s.frame, s.chunk));
  s.next_item = 0;
  if (s.chunk.dense)
    s.covered = s.chunk.first + s.chunk.items;
  else if (s.chunk.items > 0)
    s.covered = uint64_t{s.chunk.indices[s.chunk.items - 1]} + 1;
  if (s.reader->done()) s.covered = end_;  // nothing more will come
  on_frame(index, s.reader->done());
  return true;
}

void RankOrderMerge::add_items(Stream& s, uint64_t lo, uint64_t hi, void* acc) {
  const Chunk& c = s.chunk;
  if (c.dense) {
    // Dense chunks tile the region, so this one starts at or before lo.
    if (c.items == 0 || hi <= c.first || lo >= c.first + c.items) return;
    add_into(dtype_, acc, c.values + (lo - c.first) * c.elem_size, static_cast<size_t>(hi - lo));
    return;
  }
  size_t last = s.next_item;
  while (last < c.items && c.indices[last] < hi) ++last;
  scatter_add(dtype_, acc, lo, c.indices + s.next_item, c.values + s.next_item * c.elem_size, last - s.next_item);
  s.next_item = last;
}

void RankOrderMerge::start(DType dtype, const void* own, int own_rank, void* out, uint64_t begin, uint64_t end,
                           uint32_t tag, uint64_t seq, const std::vector<Source>& sources) {
  dtype_ = dtype;
  own_ = own;
  own_rank_ = own_rank;
  out_ = out;
  end_ = end;
  lo_ = begin;
  streams_.clear();
  streams_.resize(sources.size());
  order_.clear();
  for (size_t i = 0; i < sources.size(); ++i) {
    streams_[i].source = sources[i];
    streams_[i].reader =
        std::make_unique<ChunkReader>(begin, end, dtype_size(dtype), tag, seq, sources[i].rank, "region-reduce");
    streams_[i].covered = begin;
    order_.push_back(i);
  }
  std::sort(order_.begin(), order_.end(),
            [&](size_t a, size_t b) { return sources[a].rank < sources[b].rank; });
}

void RankOrderMerge::sum_window(uint64_t hi) {
  const size_t e = dtype_size(dtype_);
  const auto n = static_cast<size_t>(hi - lo_);
  const uint8_t* mine = static_cast<const uint8_t*>(own_) + lo_ * e;
  if (own_ == out_) {  // the sum overwrites this rank's values: keep them first
    own_copy_.assign(mine, mine + n * e);
    mine = own_copy_.data();
  }
  uint8_t* acc = static_cast<uint8_t*>(out_) + lo_ * e;
  std::memset(acc, 0, n * e);
  bool own_added = false;
  for (size_t i : order_) {
    if (!own_added && own_rank_ < streams_[i].source.rank) {
      add_nonzero_runs(dtype_, acc, mine, n);
      own_added = true;
    }
    add_items(streams_[i], lo_, hi, acc);
  }
  if (!own_added) add_nonzero_runs(dtype_, acc, mine, n);
  lo_ = hi;
}

Result<bool> RankOrderMerge::advance(const FrameObserver& on_frame, bool& moved) {
  while (lo_ < end_) {
    uint64_t hi = std::min<uint64_t>(end_, lo_ + kWindow);
    for (size_t i = 0; i < streams_.size(); ++i) {
      while (streams_[i].covered <= lo_) {
        auto got = fetch(streams_[i], i, on_frame);
        if (!got.is_ok()) return got.status();
        if (!got.value()) return false;  // the window waits for this stream
        moved = true;
      }
      hi = std::min(hi, streams_[i].covered);
    }
    sum_window(hi);
  }
  // Streams not read to their end yet (an empty region, or a last frame
  // still on the link): anything but an empty end is out of the region and
  // the reader rejects it.
  for (size_t i = 0; i < streams_.size(); ++i) {
    while (!streams_[i].reader->done()) {
      auto got = fetch(streams_[i], i, on_frame);
      if (!got.is_ok()) return got.status();
      if (!got.value()) return false;
      moved = true;
    }
  }
  return true;
}

std::vector<int> RankOrderMerge::waiting_on() const {
  std::vector<int> ranks;
  for (const Stream& s : streams_)
    if (!s.reader->done() && (s.covered <= lo_ || lo_ == end_)) ranks.push_back(s.source.rank);
  return ranks;
}

}  // namespace omnib
