#include "engine/blocks/input_support.h"

#include <bit>

#include "engine/blocks/block_scan.h"

namespace omnib {
namespace {

size_t words_for(size_t count) { return (count + 63) / 64; }

// Bits [begin, end) of a word's bit positions: a mask for the word at `w`.
uint64_t range_mask(size_t w, size_t begin, size_t end) {
  const size_t lo = w * 64 < begin ? begin - w * 64 : 0;
  const size_t hi = end - w * 64 >= 64 ? 64 : end - w * 64;
  const uint64_t upper = hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return upper & ~((uint64_t{1} << lo) - 1);
}

}  // namespace

InputSupport::InputSupport(int nodes, size_t count)
    : nodes_(nodes), count_(count), ranks_(static_cast<size_t>(nodes), Bits(words_for(count), 0)),
      sum_(words_for(count), 0) {}

uint64_t InputSupport::memory_bytes(int nodes, size_t count) {
  return static_cast<uint64_t>(nodes + 1) * words_for(count) * sizeof(uint64_t);
}

void InputSupport::record(Bits& bits, const void* data, size_t elem_size, size_t count) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < count; ++i)
    if (block_is_nonzero(bytes + i * elem_size, 1, elem_size)) bits[i / 64] |= uint64_t{1} << (i % 64);
}

void InputSupport::set_rank(int rank, const void* data, size_t elem_size) {
  record(ranks_[static_cast<size_t>(rank)], data, elem_size, count_);
}

void InputSupport::set_sum(const void* data, size_t elem_size) { record(sum_, data, elem_size, count_); }

uint64_t InputSupport::count_in(const Bits& bits, size_t begin, size_t end) {
  uint64_t n = 0;
  for (size_t w = begin / 64; w * 64 < end; ++w) n += std::popcount(bits[w] & range_mask(w, begin, end));
  return n;
}

uint64_t InputSupport::elements(int rank, size_t begin, size_t end) const {
  return count_in(ranks_[static_cast<size_t>(rank)], begin, end);
}

uint64_t InputSupport::union_elements(std::span<const int> ranks, size_t begin, size_t end) const {
  uint64_t n = 0;
  for (size_t w = begin / 64; w * 64 < end; ++w) {
    uint64_t any = 0;
    for (int r : ranks) any |= ranks_[static_cast<size_t>(r)][w];
    n += std::popcount(any & range_mask(w, begin, end));
  }
  return n;
}

uint64_t InputSupport::sum_elements(size_t begin, size_t end) const { return count_in(sum_, begin, end); }

bool InputSupport::any(int rank, size_t begin, size_t end) const {
  const Bits& bits = ranks_[static_cast<size_t>(rank)];
  for (size_t w = begin / 64; w * 64 < end; ++w)
    if (bits[w] & range_mask(w, begin, end)) return true;
  return false;
}

std::vector<uint64_t> InputSupport::blocks(int rank, const BlockLayout& layout) const {
  std::vector<uint64_t> out;
  for (uint64_t b = 0; b < layout.num_blocks(); ++b)
    if (any(rank, layout.block_begin(b), layout.block_begin(b) + layout.block_length(b))) out.push_back(b);
  return out;
}

}  // namespace omnib
