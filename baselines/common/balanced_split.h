// Ok-Topk's balanced split (Li and Hoefler, PPoPP'22): region boundaries over
// a tensor's index space such that every region holds about the same number
// of non-zeros, summed over ranks. Every rank counts its non-zeros per cell
// of a histogram, the counts of all ranks are summed, and every rank derives
// the same boundaries from the same sums (integer arithmetic only).
//
// Round 1 counts kCoarseBuckets even buckets. A boundary falls in one bucket;
// when such a bucket holds more than 1/kSlack of a region's share, a second
// round cuts it into kFineBuckets even cells and counts those. Each boundary
// is then the cell edge closest to its target, so every region's count is
// within max(T / (kSlack * P), P * w) of T / P, with T the non-zeros of all
// ranks and w the widest cell a boundary fell in after refining (about
// count / 2^20; see max_deviation()).
//
// One object serves one collective at a time; it is not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "baselines/common/even_partition.h"
#include "engine/blocks/input_support.h"

namespace omnib {

class BalancedSplit {
 public:
  static constexpr size_t kCoarseBuckets = 1024;
  static constexpr size_t kFineBuckets = 1024;
  static constexpr uint64_t kSlack = 64;

  // Starts a split of `count` elements into `parts` regions, at round 1.
  void reset(size_t count, int parts);

  // The cells the current round counts, in index order.
  const std::vector<Slice>& round_cells() const { return round_cells_; }

  // Adds one rank's counts of the current round (round_cells().size() of them).
  void add_counts(const uint32_t* counts);
  // Adds counts of the cells [first, first + n) of the current round: one
  // rank's counts may come in pieces. The caller keeps the range in bounds.
  void add_counts(size_t first, const uint32_t* counts, size_t n);

  // Call once every rank's counts of the round are added. Returns true when
  // a fine round follows (round_cells() then holds its cells), false when
  // the boundaries are known.
  bool finish_round();

  // After the last round: region j is [boundary(j), boundary(j+1)).
  Slice region(int j) const { return {boundaries_[j], boundaries_[j + 1] - boundaries_[j]}; }
  const std::vector<uint64_t>& boundaries() const { return boundaries_; }

  // The most a region's non-zeros may differ from total() / parts after the
  // last round (the guarantee above), and the total itself.
  uint64_t max_deviation() const;
  uint64_t total() const { return total_; }

 private:
  // Boundaries from `cells` (tiling [0, count) in order) and their totals.
  void place_boundaries(const std::vector<Slice>& cells, const std::vector<uint64_t>& totals);
  // For each target j * T / parts (j = 1 .. parts-1): the index of the cell it falls in.
  std::vector<size_t> target_cells(const std::vector<uint64_t>& totals) const;

  size_t count_ = 0;
  int parts_ = 1;
  int round_ = 0;
  uint64_t total_ = 0;
  std::vector<Slice> coarse_;
  std::vector<uint64_t> coarse_totals_;
  std::vector<size_t> refined_;  // coarse buckets cut into fine cells in round 2
  std::vector<Slice> round_cells_;
  std::vector<uint64_t> round_totals_;
  size_t finest_cell_ = 0;  // widest cell a boundary was placed in after refining
  std::vector<uint64_t> boundaries_;
};

// Non-zero elements (of elem_size bytes, 2 or 4) of `tensor` in each cell,
// written to counts[i]. An element is non-zero when any of its bits is set
// (as in extract_pairs).
void count_nonzeros(const void* tensor, size_t elem_size, const std::vector<Slice>& cells, uint32_t* counts);

// Ok-Topk's histogram counts stream as dense 4-byte elements.
inline constexpr size_t kHistogramCountBytes = sizeof(uint32_t);

// The split every rank of Ok-Topk computes, run on the counts of the actual
// inputs: every round's cells counted per rank, as each rank counts its own.
// Returns the regions; `rounds` gets the number of cells of every histogram
// round (the model and the simulator's schedule count the same rounds).
std::vector<Slice> balanced_regions(const InputSupport& s, std::vector<size_t>& rounds);

}  // namespace omnib
