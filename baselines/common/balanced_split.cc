#include "baselines/common/balanced_split.h"

#include <algorithm>

namespace omnib {
namespace {

std::vector<Slice> even_cells(uint64_t begin, size_t length, size_t at_most) {
  const size_t n = std::min(length, at_most);
  std::vector<Slice> cells;
  cells.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Slice s = even_slice(length, static_cast<int>(n), static_cast<int>(i));
    s.begin += begin;
    cells.push_back(s);
  }
  return cells;
}

}  // namespace

void BalancedSplit::reset(size_t count, int parts) {
  count_ = count;
  parts_ = parts;
  round_ = 1;
  total_ = 0;
  coarse_ = even_cells(0, count, kCoarseBuckets);
  coarse_totals_.assign(coarse_.size(), 0);
  refined_.clear();
  round_cells_ = coarse_;
  round_totals_.assign(round_cells_.size(), 0);
  finest_cell_ = 0;
  boundaries_.clear();
}

void BalancedSplit::add_counts(const uint32_t* counts) { add_counts(0, counts, round_totals_.size()); }

void BalancedSplit::add_counts(size_t first, const uint32_t* counts, size_t n) {
  for (size_t i = 0; i < n; ++i) round_totals_[first + i] += counts[i];
}

std::vector<size_t> BalancedSplit::target_cells(const std::vector<uint64_t>& totals) const {
  std::vector<size_t> cells;
  const auto p = static_cast<uint64_t>(parts_);
  uint64_t cum = 0;  // non-zeros before cell i
  size_t i = 0;
  for (int j = 1; j < parts_; ++j) {
    const uint64_t target = static_cast<uint64_t>(j) * total_;  // scaled by parts
    while (i < totals.size() && (cum + totals[i]) * p < target) cum += totals[i++];
    cells.push_back(std::min(i, totals.size() - 1));
  }
  return cells;
}

bool BalancedSplit::finish_round() {
  if (round_ == 1) {
    coarse_totals_ = round_totals_;
    for (uint64_t t : coarse_totals_) total_ += t;
    // Refine the buckets holding a boundary that cannot be placed within
    // 1/kSlack of a region's share at bucket resolution.
    if (total_ > 0 && parts_ > 1) {
      for (size_t b : target_cells(coarse_totals_)) {
        if (coarse_totals_[b] * kSlack * static_cast<uint64_t>(parts_) <= total_) continue;
        if (coarse_[b].length == 1) {
          finest_cell_ = std::max<size_t>(finest_cell_, 1);  // cannot be cut further
        } else if (refined_.empty() || refined_.back() != b) {
          refined_.push_back(b);
        }
      }
    }
    if (!refined_.empty()) {
      round_ = 2;
      round_cells_.clear();
      for (size_t b : refined_) {
        const auto fine = even_cells(coarse_[b].begin, coarse_[b].length, kFineBuckets);
        for (const Slice& s : fine) finest_cell_ = std::max(finest_cell_, s.length);
        round_cells_.insert(round_cells_.end(), fine.begin(), fine.end());
      }
      round_totals_.assign(round_cells_.size(), 0);
      return true;
    }
    place_boundaries(coarse_, coarse_totals_);
    return false;
  }
  // Round 2: the coarse buckets with the refined ones replaced by their cells.
  std::vector<Slice> cells;
  std::vector<uint64_t> totals;
  size_t next_fine = 0;
  size_t r = 0;
  for (size_t b = 0; b < coarse_.size(); ++b) {
    if (r < refined_.size() && refined_[r] == b) {
      while (next_fine < round_cells_.size() && round_cells_[next_fine].begin < coarse_[b].end()) {
        cells.push_back(round_cells_[next_fine]);
        totals.push_back(round_totals_[next_fine++]);
      }
      ++r;
    } else {
      cells.push_back(coarse_[b]);
      totals.push_back(coarse_totals_[b]);
    }
  }
  place_boundaries(cells, totals);
  return false;
}

void BalancedSplit::place_boundaries(const std::vector<Slice>& cells, const std::vector<uint64_t>& totals) {
  boundaries_.assign(static_cast<size_t>(parts_) + 1, 0);
  boundaries_.back() = count_;
  if (total_ == 0 || cells.empty()) {
    // Nothing to balance: an even split.
    for (int j = 1; j < parts_; ++j) boundaries_[j] = even_slice(count_, parts_, j).begin;
    return;
  }
  const auto p = static_cast<uint64_t>(parts_);
  const std::vector<size_t> in_cell = target_cells(totals);
  // cum[i]: non-zeros before cell i, scaled by parts like the targets.
  std::vector<uint64_t> cum(cells.size() + 1, 0);
  for (size_t i = 0; i < cells.size(); ++i) cum[i + 1] = cum[i] + totals[i] * p;
  for (int j = 1; j < parts_; ++j) {
    const uint64_t target = static_cast<uint64_t>(j) * total_;
    const size_t i = in_cell[static_cast<size_t>(j - 1)];
    // The nearer edge of the cell the target falls in; ties go to its end.
    const bool begin_nearer = target - std::min(target, cum[i]) < cum[i + 1] - std::min(cum[i + 1], target);
    const uint64_t edge = begin_nearer ? cells[i].begin : cells[i].end();
    boundaries_[j] = std::max(boundaries_[j - 1], edge);
  }
}

uint64_t BalancedSplit::max_deviation() const {
  const auto p = static_cast<uint64_t>(parts_);
  return std::max((total_ + kSlack * p - 1) / (kSlack * p), p * static_cast<uint64_t>(finest_cell_));
}

namespace {

template <typename W>
void count_words(const W* words, const std::vector<Slice>& cells, uint32_t* counts) {
  // Sparse inputs are mostly zero runs: test a group with one wide OR (it
  // vectorizes) and count single elements only in groups that hold a value.
  constexpr size_t kGroup = 16;
  auto count = [](const W* w, size_t n) {
    uint32_t c = 0;
    for (size_t i = 0; i < n; ++i) c += w[i] != 0 ? 1 : 0;
    return c;
  };
  for (size_t c = 0; c < cells.size(); ++c) {
    const W* w = words + cells[c].begin;
    const size_t len = cells[c].length;
    uint32_t n = 0;
    size_t i = 0;
    for (; i + kGroup <= len; i += kGroup) {
      W any = 0;
      for (size_t j = 0; j < kGroup; ++j) any |= w[i + j];
      if (any != 0) n += count(w + i, kGroup);
    }
    counts[c] = n + count(w + i, len - i);
  }
}

}  // namespace

void count_nonzeros(const void* tensor, size_t elem_size, const std::vector<Slice>& cells, uint32_t* counts) {
  if (elem_size == 2)
    count_words(static_cast<const uint16_t*>(tensor), cells, counts);
  else
    count_words(static_cast<const uint32_t*>(tensor), cells, counts);
}

std::vector<Slice> balanced_regions(const InputSupport& s, std::vector<size_t>& rounds) {
  BalancedSplit split;
  split.reset(s.count(), s.nodes());
  for (bool more = true; more; more = split.finish_round()) {
    const std::vector<Slice>& cells = split.round_cells();
    rounds.push_back(cells.size());
    std::vector<uint32_t> counts(cells.size());
    for (int r = 0; r < s.nodes(); ++r) {
      for (size_t i = 0; i < cells.size(); ++i)
        counts[i] = static_cast<uint32_t>(s.elements(r, cells[i].begin, cells[i].end()));
      split.add_counts(counts.data());
    }
  }
  std::vector<Slice> regions;
  for (int j = 0; j < s.nodes(); ++j) regions.push_back(split.region(j));
  return regions;
}

}  // namespace omnib
