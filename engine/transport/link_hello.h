// The two frames that open every link (docs/wire-format.md, "Links"):
// the acceptor sends a challenge with a fresh nonce; the dialer answers with
// a hello naming its rank and the link and proving the job token over that
// nonce. Nothing else is read from a connection before its hello checks out.
#pragma once

#include <cstdint>
#include <string>

#include "engine/auth/job_token.h"
#include "engine/base/status.h"
#include "engine/transport/frame_format.h"

namespace omnib {

// Who a hello says it is, and what it proves.
struct HelloClaim {
  uint32_t job_id = 0;
  uint32_t plan = 0;  // the frame's tag
  uint32_t dialer = 0;
  uint32_t link_id = 0;
};

// The bytes of a challenge frame carrying `nonce`.
std::string challenge_frame(uint32_t job_id, const Nonce& nonce);
// The bytes of the hello that answers `nonce` for a link to `acceptor`.
std::string hello_frame(const JobToken& token, const HelloClaim& claim, int acceptor, const Nonce& nonce);
// True when `payload`'s MAC proves `token` for this claim, acceptor and nonce.
bool hello_proves_token(const JobToken& token, const HelloClaim& claim, const wire::HelloPayload& payload,
                        int acceptor, const Nonce& nonce);

// Checks the header of an opening frame before its payload is looked at:
// magic, version, job id, and the expected type with its exact length.
Status check_opening_header(const wire::FrameHeader& h, wire::FrameType expected, uint32_t job_id);

// The payload size of an opening frame of type `t` (a challenge or a hello).
size_t opening_payload_size(wire::FrameType t);

// Reads one opening frame (a challenge or a hello) from a non-blocking
// socket as its bytes arrive; never reads past it. The header is checked
// (magic, version, job id, type and exact length) before the payload.
class OpeningFrameReader {
 public:
  OpeningFrameReader(wire::FrameType expected, uint32_t job_id);

  // Reads whatever is available. kUnavailable for a closed connection or a
  // frame that is not the expected one (the message says what was wrong).
  Status read_available(int fd);
  bool done() const { return have_ == sizeof(header_) + payload_size_; }

  const wire::FrameHeader& header() const { return header_; }
  // Valid once done(); the payload of the expected type.
  const wire::ChallengePayload& challenge() const { return payload_.challenge; }
  const wire::HelloPayload& hello() const { return payload_.hello; }

 private:
  wire::FrameType expected_;
  uint32_t job_id_;
  size_t payload_size_;
  size_t have_ = 0;
  wire::FrameHeader header_{};
  union {
    wire::ChallengePayload challenge;
    wire::HelloPayload hello;
  } payload_{};
};

}  // namespace omnib
