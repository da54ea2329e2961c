#include "engine/transport/link_hello.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "engine/transport/connection.h"

namespace omnib {
namespace {

constexpr std::string_view kLinkLabel = "omni-bench link v2";

Mac hello_mac(const JobToken& token, const HelloClaim& c, int acceptor, const Nonce& nonce) {
  const auto acceptor32 = static_cast<uint32_t>(acceptor);
  return token.prove(kLinkLabel, {bytes_of_value(c.job_id), bytes_of_value(c.plan), bytes_of_value(c.dialer),
                                  bytes_of_value(c.link_id), bytes_of_value(acceptor32), bytes_of(nonce)});
}

template <typename Payload>
std::string frame_bytes(wire::FrameType type, uint32_t job_id, uint32_t tag, const Payload& payload) {
  wire::FrameHeader h = make_header(type, job_id, tag, 0, sizeof(payload));
  std::string out(sizeof(h) + sizeof(payload), '\0');
  std::memcpy(out.data(), &h, sizeof(h));
  std::memcpy(out.data() + sizeof(h), &payload, sizeof(payload));
  return out;
}

}  // namespace

std::string challenge_frame(uint32_t job_id, const Nonce& nonce) {
  wire::ChallengePayload c{};
  std::memcpy(c.nonce, nonce.data(), nonce.size());
  return frame_bytes(wire::FrameType::kChallenge, job_id, 0, c);
}

std::string hello_frame(const JobToken& token, const HelloClaim& claim, int acceptor, const Nonce& nonce) {
  wire::HelloPayload h{};
  h.rank = claim.dialer;
  h.link_id = claim.link_id;
  Mac mac = hello_mac(token, claim, acceptor, nonce);
  std::memcpy(h.mac, mac.data(), mac.size());
  return frame_bytes(wire::FrameType::kHello, claim.job_id, claim.plan, h);
}

bool hello_proves_token(const JobToken& token, const HelloClaim& claim, const wire::HelloPayload& payload,
                        int acceptor, const Nonce& nonce) {
  Mac mac{};
  std::memcpy(mac.data(), payload.mac, mac.size());
  const auto acceptor32 = static_cast<uint32_t>(acceptor);
  return token.verify(mac, kLinkLabel, {bytes_of_value(claim.job_id), bytes_of_value(claim.plan),
                                        bytes_of_value(claim.dialer), bytes_of_value(claim.link_id),
                                        bytes_of_value(acceptor32), bytes_of(nonce)});
}

size_t opening_payload_size(wire::FrameType t) {
  return t == wire::FrameType::kHello ? sizeof(wire::HelloPayload) : sizeof(wire::ChallengePayload);
}

Status check_opening_header(const wire::FrameHeader& h, wire::FrameType expected, uint32_t job_id) {
  if (h.magic != wire::kMagic) return unavailable_error("bad magic (not an omni-bench peer)");
  if (h.version != wire::kVersion)
    return unavailable_error("wire version " + std::to_string(h.version) + ", this build speaks " +
                             std::to_string(wire::kVersion));
  if (h.job_id != job_id) return unavailable_error("job id " + std::to_string(h.job_id) + " of another job");
  if (h.type != static_cast<uint16_t>(expected) || h.length != opening_payload_size(expected))
    return unavailable_error("opening frame of type " + std::to_string(h.type) + " and length " +
                             std::to_string(h.length));
  return Status::ok();
}

OpeningFrameReader::OpeningFrameReader(wire::FrameType expected, uint32_t job_id)
    : expected_(expected), job_id_(job_id), payload_size_(opening_payload_size(expected)) {}

Status OpeningFrameReader::read_available(int fd) {
  while (!done()) {
    char* into = have_ < sizeof(header_) ? reinterpret_cast<char*>(&header_) + have_
                                         : reinterpret_cast<char*>(&payload_) + (have_ - sizeof(header_));
    size_t want = have_ < sizeof(header_) ? sizeof(header_) - have_ : sizeof(header_) + payload_size_ - have_;
    ssize_t r = ::recv(fd, into, want, MSG_DONTWAIT);
    if (r == 0) return unavailable_error("closed before its opening frame was complete");
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::ok();
      return unavailable_error(std::string("receive failed: ") + std::strerror(errno));
    }
    have_ += static_cast<size_t>(r);
    if (have_ == sizeof(header_)) OMNIB_RETURN_IF_ERROR(check_opening_header(header_, expected_, job_id_));
  }
  return Status::ok();
}

}  // namespace omnib
