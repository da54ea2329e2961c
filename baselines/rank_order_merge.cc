#include "baselines/rank_order_merge.h"

#include <algorithm>
#include <cstring>

#include "baselines/sparse_vector.h"
#include "engine/reduce_ops.h"

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

Status RankOrderMerge::fetch(Stream& s, uint64_t end, size_t index, const FrameObserver& on_frame) {
  OMNIB_RETURN_IF_ERROR(s.source.link->recv(s.frame));
  OMNIB_RETURN_IF_ERROR(s.reader->next(s.frame, s.chunk));
  s.next_item = 0;
  if (s.chunk.dense)
    s.covered = s.chunk.first + s.chunk.items;
  else if (s.chunk.items > 0)
    s.covered = uint64_t{s.chunk.indices[s.chunk.items - 1]} + 1;
  if (s.reader->done()) s.covered = end;  // nothing more will come
  on_frame(index, s.reader->done());
  return Status::ok();
}

void RankOrderMerge::add_items(DType dtype, Stream& s, uint64_t lo, uint64_t hi, void* acc) {
  const Chunk& c = s.chunk;
  if (c.dense) {
    // Dense chunks tile the region, so this one starts at or before lo.
    if (c.items == 0 || hi <= c.first || lo >= c.first + c.items) return;
    add_into(dtype, acc, c.values + (lo - c.first) * c.elem_size, static_cast<size_t>(hi - lo));
    return;
  }
  size_t last = s.next_item;
  while (last < c.items && c.indices[last] < hi) ++last;
  scatter_add(dtype, acc, lo, c.indices + s.next_item, c.values + s.next_item * c.elem_size, last - s.next_item);
  s.next_item = last;
}

Status RankOrderMerge::run(DType dtype, const void* own, int own_rank, void* out, uint64_t begin, uint64_t end,
                           uint32_t tag, uint64_t seq, const std::vector<Source>& sources,
                           const FrameObserver& on_frame) {
  const size_t e = dtype_size(dtype);
  streams_.clear();
  streams_.resize(sources.size());
  std::vector<size_t> order;  // stream indices in rank order
  for (size_t i = 0; i < sources.size(); ++i) {
    streams_[i].source = sources[i];
    streams_[i].reader =
        std::make_unique<ChunkReader>(begin, end, e, tag, seq, sources[i].rank, "region-reduce");
    streams_[i].covered = begin;
    order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sources[a].rank < sources[b].rank; });
  const auto* own_bytes = static_cast<const uint8_t*>(own);
  auto* out_bytes = static_cast<uint8_t*>(out);
  for (uint64_t lo = begin; lo < end;) {
    uint64_t hi = std::min<uint64_t>(end, lo + kWindow);
    for (size_t i = 0; i < streams_.size(); ++i) {
      while (streams_[i].covered <= lo) OMNIB_RETURN_IF_ERROR(fetch(streams_[i], end, i, on_frame));
      hi = std::min(hi, streams_[i].covered);
    }
    const auto n = static_cast<size_t>(hi - lo);
    const uint8_t* mine = own_bytes + lo * e;
    if (own == out) {  // the sum overwrites this rank's values: keep them first
      own_copy_.assign(mine, mine + n * e);
      mine = own_copy_.data();
    }
    uint8_t* acc = out_bytes + lo * e;
    std::memset(acc, 0, n * e);
    bool own_added = false;
    for (size_t i : order) {
      if (!own_added && own_rank < streams_[i].source.rank) {
        add_nonzero_runs(dtype, acc, mine, n);
        own_added = true;
      }
      add_items(dtype, streams_[i], lo, hi, acc);
    }
    if (!own_added) add_nonzero_runs(dtype, acc, mine, n);
    lo = hi;
  }
  // Streams not read to their end yet (an empty region, or a last frame
  // still on the link): anything but an empty end is out of the region and
  // the reader rejects it.
  for (size_t i = 0; i < streams_.size(); ++i)
    while (!streams_[i].reader->done()) OMNIB_RETURN_IF_ERROR(fetch(streams_[i], end, i, on_frame));
  return Status::ok();
}

}  // namespace omnib
