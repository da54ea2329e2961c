// Splits an index space of `count` elements into `parts` contiguous, balanced
// slices. Used by the ring (segments) and by SparCML split (owner ranges);
// works for any count, including count < parts (some slices are then empty).
#pragma once

#include <cstddef>

namespace omnib {

struct Slice {
  size_t begin = 0;
  size_t length = 0;
  size_t end() const { return begin + length; }
};

// Slice i of `parts`: [count*i/parts, count*(i+1)/parts).
inline Slice even_slice(size_t count, int parts, int i) {
  const size_t begin = count * static_cast<size_t>(i) / static_cast<size_t>(parts);
  const size_t end = count * static_cast<size_t>(i + 1) / static_cast<size_t>(parts);
  return {begin, end - begin};
}

}  // namespace omnib
