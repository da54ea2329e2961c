#include "baselines/common/local_nonzeros.h"

#include <algorithm>

#include "baselines/common/balanced_split.h"

namespace omnib {

void LocalNonzeros::scan(const void* tensor, size_t count, size_t elem_size, const std::vector<Slice>& cells,
                         uint32_t* counts) {
  tensor_ = tensor;
  count_ = count;
  elem_size_ = elem_size;
  kept_ = true;
  pairs_.reset(0, count, false, elem_size);
  uint64_t scanned = 0;
  for (size_t c = 0; c < cells.size(); ++c) {
    if (!kept_) {
      // Past the point where pairs pay: count the rest without keeping them.
      count_nonzeros(tensor, elem_size, {cells.begin() + static_cast<std::ptrdiff_t>(c), cells.end()}, counts + c);
      break;
    }
    extract_pairs(tensor, elem_size, cells[c].begin, cells[c].end(), cell_pairs_);
    counts[c] = static_cast<uint32_t>(cell_pairs_.pairs());
    pairs_.indices.insert(pairs_.indices.end(), cell_pairs_.indices.begin(), cell_pairs_.indices.end());
    pairs_.values.insert(pairs_.values.end(), cell_pairs_.values.begin(), cell_pairs_.values.end());
    scanned += cells[c].length;
    // Stop keeping pairs once they cannot pay for the whole tensor, or once
    // a sixteenth of it shows a density at which they would not.
    if (dense_is_smaller(pairs_.pairs(), count, elem_size) ||
        (scanned * 16 >= count && dense_is_smaller(pairs_.pairs(), scanned, elem_size))) {
      kept_ = false;
      pairs_.reset(0, count, false, elem_size);
    }
  }
}

std::pair<size_t, size_t> LocalNonzeros::pair_range(uint64_t begin, uint64_t end) const {
  const auto& idx = pairs_.indices;
  const auto lo = std::lower_bound(idx.begin(), idx.end(), begin);
  const auto hi = std::lower_bound(lo, idx.end(), end);
  return {static_cast<size_t>(lo - idx.begin()), static_cast<size_t>(hi - idx.begin())};
}

void LocalNonzeros::count(const std::vector<Slice>& cells, uint32_t* counts) const {
  if (!kept_) {
    count_nonzeros(tensor_, elem_size_, cells, counts);
    return;
  }
  for (size_t c = 0; c < cells.size(); ++c) {
    const auto [lo, hi] = pair_range(cells[c].begin, cells[c].end());
    counts[c] = static_cast<uint32_t>(hi - lo);
  }
}

VectorView LocalNonzeros::smaller(Slice region, SparseVector& scratch) const {
  const size_t elem_size = elem_size_;
  size_t pairs = 0;
  size_t first = 0;
  if (kept_) {
    const auto [lo, hi] = pair_range(region.begin, region.end());
    pairs = hi - lo;
    first = lo;
  } else {
    // Count before extracting: a region where dense wins needs no pairs.
    uint32_t n = 0;
    count_nonzeros(tensor_, elem_size, {region}, &n);
    if (!dense_is_smaller(n, region.length, elem_size))
      return extract_smaller(tensor_, region.begin, region.end(), elem_size, scratch);
    pairs = n;
  }
  VectorView v;
  v.begin = region.begin;
  v.end = region.end();
  v.elem_size = elem_size;
  if (dense_is_smaller(pairs, region.length, elem_size)) {
    v.dense = true;
    v.values = static_cast<const uint8_t*>(tensor_) + region.begin * elem_size;
  } else {
    v.pairs = pairs;
    v.indices = pairs_.indices.data() + first;
    v.values = pairs_.values.data() + first * elem_size;
  }
  return v;
}

}  // namespace omnib
