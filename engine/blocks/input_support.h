// Where every rank's input is non-zero, element by element, and where their
// sum is. The harness generates every rank's tensor (it needs them for the
// reference sum), so the wire models can count exactly what each algorithm
// must send instead of estimating from average densities.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/blocks/block_layout.h"

namespace omnib {

class InputSupport {
 public:
  InputSupport(int nodes, size_t count);

  // Bits kept: one per element and rank, plus one per element for the sum.
  static uint64_t memory_bytes(int nodes, size_t count);

  // Records rank's tensor (elements of elem_size bytes, 2 or 4; -0.0 is zero
  // as everywhere in the engine), and the reduced result's.
  void set_rank(int rank, const void* data, size_t elem_size);
  void set_sum(const void* data, size_t elem_size);

  int nodes() const { return nodes_; }
  size_t count() const { return count_; }

  // Non-zero elements in [begin, end): of one rank, of at least one of
  // `ranks`, of the sum.
  uint64_t elements(int rank, size_t begin, size_t end) const;
  uint64_t union_elements(std::span<const int> ranks, size_t begin, size_t end) const;
  uint64_t sum_elements(size_t begin, size_t end) const;

  // Whether [begin, end) holds a non-zero element of `rank`.
  bool any(int rank, size_t begin, size_t end) const;

  // Rank's non-zero blocks of `layout`, in increasing order.
  std::vector<uint64_t> blocks(int rank, const BlockLayout& layout) const;

 private:
  using Bits = std::vector<uint64_t>;
  static void record(Bits& bits, const void* data, size_t elem_size, size_t count);
  static uint64_t count_in(const Bits& bits, size_t begin, size_t end);

  int nodes_;
  size_t count_;
  std::vector<Bits> ranks_;
  Bits sum_;
};

}  // namespace omnib
