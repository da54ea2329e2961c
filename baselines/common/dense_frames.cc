#include "baselines/common/dense_frames.h"

#include <cmath>

namespace omnib {

double DenseFrames::wire_bytes(double elements) const {
  return elements * static_cast<double>(elem_size_) +
         std::ceil(elements / static_cast<double>(frame_elems_)) * sizeof(wire::FrameHeader);
}

Status check_dense_frame(const Frame& frame, int peer, uint64_t seq, uint32_t tag, size_t bytes,
                         const std::string& expecting, const std::string& tag_name) {
  const wire::FrameHeader& h = frame.header;
  if (frame.type() == wire::FrameType::kDense && h.seq == seq && h.tag == tag && frame.payload.size() == bytes)
    return Status::ok();
  return unavailable_error("rank " + std::to_string(peer) + " sent frame type " + std::to_string(h.type) +
                           ", collective " + std::to_string(h.seq) + ", " + tag_name + " " + std::to_string(h.tag) +
                           ", " + std::to_string(frame.payload.size()) + " bytes where " + expecting +
                           " expects a dense frame of collective " + std::to_string(seq) + ", " + tag_name + " " +
                           std::to_string(tag) + ", " + std::to_string(bytes) + " bytes (ranks out of step?)");
}

}  // namespace omnib
