// This rank's non-zeros for oktopk, found in one pass over its input: the
// count per histogram cell and, while pairs are the smaller form of the
// whole tensor, the (index, value) pairs themselves, so that the parts sent
// to the region owners are slices of one list instead of being extracted
// again. With more non-zeros than that, a part is counted first and sent
// as a dense view where that is smaller, else extracted (extract_smaller).
//
// scan() and count() are called by one thread; smaller() may then be called
// by several at once (each with its own scratch). The tensor must stay
// unchanged and alive until the last smaller().
#pragma once

#include <cstdint>
#include <vector>

#include "baselines/common/even_partition.h"
#include "baselines/common/sparse_vector.h"

namespace omnib {

class LocalNonzeros {
 public:
  // Reads tensor[0, count) (elements of elem_size bytes, 2 or 4) once;
  // counts[i] = non-zeros in cells[i]. The cells tile [0, count) in index order.
  void scan(const void* tensor, size_t count, size_t elem_size, const std::vector<Slice>& cells, uint32_t* counts);

  // counts[i] = non-zeros in cells[i] (any cells, in index order): from the
  // pairs when they were kept, else from the tensor.
  void count(const std::vector<Slice>& cells, uint32_t* counts) const;

  // tensor[region] in the smaller form (dense_is_smaller): a slice of the
  // kept pairs or a dense view of the tensor, neither copied; or pairs
  // extracted into `scratch` when the list was not kept.
  VectorView smaller(Slice region, SparseVector& scratch) const;

  bool kept_pairs() const { return kept_; }

 private:
  // Where the pairs with indices in [begin, end) start and end in pairs_.
  std::pair<size_t, size_t> pair_range(uint64_t begin, uint64_t end) const;

  const void* tensor_ = nullptr;
  size_t count_ = 0;
  size_t elem_size_ = 4;
  bool kept_ = false;
  SparseVector pairs_;
  SparseVector cell_pairs_;  // one cell's pairs during scan()
};

}  // namespace omnib
