// The frame header check (engine/transport/connection.cc validate_header):
// whatever a peer sends, a header that passes has our magic, version and job
// id and a bounded length.
//
// Input: FrameHeader (32 bytes) | uint32 job_id | int32 peer_rank.
#include "engine/transport/connection.h"
#include "fuzz/fuzz_input.h"

using namespace omnib;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  const auto h = in.take<wire::FrameHeader>();
  const auto job_id = in.take<uint32_t>();
  const auto peer_rank = in.take<int32_t>();
  const Status s = validate_header(h, job_id, peer_rank);
  if (s.is_ok() && (h.magic != wire::kMagic || h.version != wire::kVersion || h.job_id != job_id ||
                    h.length > wire::kMaxPayload))
    fuzz::fail("validate_header accepted a header it should refuse");
  if (!s.is_ok() && s.message().empty()) fuzz::fail("a refusal without a message");
  // What we send ourselves always passes.
  const uint64_t length = h.length > wire::kMaxPayload ? wire::kMaxPayload : h.length;
  const auto mine = make_header(static_cast<wire::FrameType>(h.type), job_id, h.tag, h.seq, length);
  if (!validate_header(mine, job_id, peer_rank).is_ok()) fuzz::fail("a header of make_header was refused");
  return 0;
}
