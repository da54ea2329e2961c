// The non-zero elements of found blocks, taken by the scan while each block
// is in cache. Packing a batch in a sparse encoding from these needs no
// second pass over the tensor: on a host whose ranks share the memory bus,
// that pass read each non-zero block from memory again and cost the send
// lane as much as the scan itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/base/uninit_buffer.h"

namespace omnib {

struct FoundElements {
  static constexpr uint64_t kNotTaken = ~uint64_t{0};
  // Per found block: where its elements start in positions and values, or
  // kNotTaken (a block with more non-zeros than the scan takes).
  std::vector<uint64_t> first;
  std::vector<uint32_t> positions;  // of the elements within their block
  UninitBytes values;               // the elements, in order, elem_size bytes each

  void clear() {
    first.clear();
    positions.clear();
    values.clear();
  }
  // Appends found blocks [begin, end) of `from`, whose counts are
  // counts[begin..end), as this list's next found blocks: their elements
  // are adjacent in `from`, so they move in one piece (a step per block
  // cost the scan's distribution to shards more than the copy).
  void append_blocks(const FoundElements& from, size_t begin, size_t end, const uint32_t* counts, size_t elem_size) {
    uint64_t lo = kNotTaken, hi = 0;  // the taken elements' span in `from`
    for (size_t k = begin; k < end; ++k) {
      if (from.first[k] == kNotTaken) continue;
      if (lo == kNotTaken) lo = from.first[k];
      hi = from.first[k] + counts[k];
    }
    const uint64_t shift = positions.size();
    for (size_t k = begin; k < end; ++k)
      first.push_back(from.first[k] == kNotTaken ? kNotTaken : from.first[k] - lo + shift);
    if (lo == kNotTaken) return;
    positions.insert(positions.end(), from.positions.begin() + static_cast<std::ptrdiff_t>(lo),
                     from.positions.begin() + static_cast<std::ptrdiff_t>(hi));
    values.insert(values.end(), from.values.data() + lo * elem_size, from.values.data() + hi * elem_size);
  }
};

// The scan takes a block's elements when at most 1/kTakeDivisor of them
// are non-zero: the taken pairs then weigh at most half the tensor's bytes
// (fp32; three quarters for 16-bit types), and denser blocks are cheaper to
// pack from the tensor than to list. A block shorter than kTakeDivisor is
// taken when it holds one non-zero: at block size 1 every found block is one
// element, and packing each from the tensor cost a step per element (the
// pairs may then weigh twice the non-zero values: an index per value).
inline constexpr uint64_t kTakeDivisor = 4;
inline bool takes_block(uint64_t count, uint64_t len) {
  return count <= (len < kTakeDivisor ? 1 : len / kTakeDivisor);
}

}  // namespace omnib
