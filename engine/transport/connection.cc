#include "engine/transport/connection.h"

#include <string>

namespace omnib {

wire::FrameHeader make_header(wire::FrameType type, uint32_t job_id, uint32_t tag, uint64_t seq,
                              uint64_t length) {
  wire::FrameHeader h{};
  h.magic = wire::kMagic;
  h.version = wire::kVersion;
  h.type = static_cast<uint16_t>(type);
  h.job_id = job_id;
  h.tag = tag;
  h.seq = seq;
  h.length = length;
  return h;
}

Status validate_header(const wire::FrameHeader& h, uint32_t job_id, int peer_rank) {
  std::string peer = "frame from rank " + std::to_string(peer_rank) + ": ";
  if (h.magic != wire::kMagic)
    return unavailable_error(peer + "bad magic (not an omni-bench peer, or a corrupt stream)");
  if (h.version != wire::kVersion)
    return unavailable_error(peer + "wire version " + std::to_string(h.version) + ", this build speaks " +
                             std::to_string(wire::kVersion) + "; run the same omni-bench build on every rank");
  if (h.job_id != job_id)
    return unavailable_error(peer + "belongs to job " + std::to_string(h.job_id) + ", not this job " +
                             std::to_string(job_id) + " (a stale run on the same ports?)");
  if (h.length > wire::kMaxPayload)
    return unavailable_error(peer + "announces " + std::to_string(h.length) + " payload bytes, over the limit");
  return Status::ok();
}

}  // namespace omnib
