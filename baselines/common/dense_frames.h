// How the dense baselines (ring, tree) put a slice of the tensor on a link:
// frames of kStreamFrameBytes of values (at least one element each), each
// checked on arrival, and what a slice costs on the wire.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "baselines/common/even_partition.h"
#include "engine/base/status.h"
#include "engine/transport/connection.h"
#include "engine/transport/frame_format.h"

namespace omnib {

class DenseFrames {
 public:
  explicit DenseFrames(size_t elem_size)
      : elem_size_(elem_size), frame_elems_(std::max<size_t>(1, wire::kStreamFrameBytes / elem_size)) {}

  // Frames a slice of `elements` elements takes.
  size_t count(size_t elements) const { return (elements + frame_elems_ - 1) / frame_elems_; }
  // Where frame f of `slice` lies in the tensor.
  struct Span {
    size_t offset;  // bytes from the tensor's start
    size_t elements;
    size_t bytes;
  };
  Span frame(Slice slice, size_t f) const {
    const size_t first = slice.begin + f * frame_elems_;
    const size_t elements = std::min(frame_elems_, slice.end() - first);
    return {first * elem_size_, elements, elements * elem_size_};
  }

  // Bytes a slice of `elements` elements puts on the wire: its values and a
  // frame header per frame.
  double wire_bytes(double elements) const;

 private:
  size_t elem_size_;
  size_t frame_elems_;
};

// Checks that `frame` from rank `peer` is the dense frame `expecting` (e.g.
// "the ring") waits for: of call `seq`, tagged `tag`, `bytes` long. The
// error names both, calling the tag `tag_name` ("step", "tag").
Status check_dense_frame(const Frame& frame, int peer, uint64_t seq, uint32_t tag, size_t bytes,
                         const std::string& expecting, const std::string& tag_name);

}  // namespace omnib
