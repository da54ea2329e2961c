#include "baselines/sparse_cost.h"

#include <algorithm>
#include <cmath>

#include "baselines/sparse_stream.h"
#include "engine/transport/frame_format.h"

namespace omnib {

double stream_wire_bytes(double items, double item_bytes, double per_frame) {
  const double frames = std::max(1.0, std::ceil(items / per_frame));
  return items * item_bytes + frames * static_cast<double>(sizeof(wire::FrameHeader) + sizeof(ChunkHeader));
}

double sparse_stream_bytes(double pairs, size_t elem_size) {
  return stream_wire_bytes(pairs, static_cast<double>(kIndexBytes + elem_size),
                           static_cast<double>(chunk_capacity(false, elem_size)));
}

double smaller_stream_bytes(double pairs, double length, size_t elem_size) {
  const double e = static_cast<double>(elem_size);
  if (pairs * (static_cast<double>(kIndexBytes) + e) >= length * e)
    return stream_wire_bytes(length, e, static_cast<double>(chunk_capacity(true, elem_size)));
  return sparse_stream_bytes(pairs, elem_size);
}

}  // namespace omnib
