// How omni-bench frames travel over libfabric's reliable-datagram endpoints.
// Prose: docs/wire-format.md, "Fabric links".
//
// Every message is a tagged send, directed at one receive the receiver
// posted for it. A 64-bit tag names the message's kind, the frame number
// on its link and the receiver's connection id (chosen at random by the
// receiver, so a stranger cannot guess where a link's frames land):
//
//   bits 60..63 kind | 56..59 part | 32..55 frame number mod 2^24 | 0..31 connection id
//
// A frame (the 32-byte header and its payload, as on TCP) is a head message
// (the header, plus the payload when it fits in kInlinePayload) and, for a
// larger payload, the rest in up to kMaxRestParts messages. The receiver
// posts a head receive for each frame it allows the sender (a credit), and
// the rest's receives once the head has said how long the payload is.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/transport/frame_format.h"

namespace omnib::fabric_wire {

enum class Kind : uint64_t {
  kKnock = 1,    // a dialer asks an acceptor for a challenge: Knock
  kOpening = 2,  // the challenge (+ OpeningTrailer) and the hello, as on TCP
  kHead = 3,     // a frame's header, and its payload if small
  kRest = 4,     // the rest of a frame's payload
  kControl = 5,  // Control: credits and the closing notice
};

constexpr int kKindShift = 60;
constexpr int kPartShift = 56;
constexpr int kFrameShift = 32;
constexpr uint64_t kFrameMask = (uint64_t{1} << 24) - 1;
constexpr uint64_t kConnMask = 0xffffffffull;
// Every bit but the kind: knocks are received whatever their lower bits.
constexpr uint64_t kIgnoreAllButKind = (uint64_t{1} << kKindShift) - 1;

constexpr uint64_t tag(Kind kind, uint32_t conn, uint64_t frame = 0, uint32_t part = 0) {
  return (static_cast<uint64_t>(kind) << kKindShift) | (static_cast<uint64_t>(part & 0xf) << kPartShift) |
         ((frame & kFrameMask) << kFrameShift) | conn;
}

// A head message carries the payload too when it is at most this long.
constexpr size_t kHeadBytes = 4096;
constexpr size_t kInlinePayload = kHeadBytes - sizeof(wire::FrameHeader);
// A payload larger than the provider's largest message goes in parts.
constexpr uint32_t kMaxRestParts = 16;

// The rest messages of a frame with `length` payload bytes when the
// provider's largest message is `max_message` bytes, and the length of part
// `part` of them.
constexpr uint32_t rest_parts(uint64_t length, uint64_t max_message) {
  return length <= kInlinePayload ? 0 : static_cast<uint32_t>((length + max_message - 1) / max_message);
}
constexpr size_t rest_part_bytes(uint64_t length, uint32_t part, uint64_t max_message) {
  const uint64_t left = length - uint64_t{part} * max_message;
  return static_cast<size_t>(left < max_message ? left : max_message);
}

// Largest endpoint address a knock can carry (libfabric names are at most
// a few dozen bytes: a sockaddr, an EFA GID and QP, a shm name).
constexpr size_t kMaxAddressBytes = 120;

// A dialer's first message. Nothing in it is trusted: the acceptor only
// answers it with a challenge sent to `address`.
struct Knock {
  uint32_t magic;       // wire::kMagic
  uint16_t version;     // wire::kVersion
  uint16_t address_len;
  uint32_t job_id;
  uint32_t dialer_conn;  // where the challenge goes (the dialer's connection id)
  uint8_t address[kMaxAddressBytes];
};
static_assert(sizeof(Knock) == 136);

// Follows the 48 challenge bytes: where the hello and later frames go.
struct OpeningTrailer {
  uint32_t acceptor_conn;
  uint32_t reserved;
};
static_assert(sizeof(OpeningTrailer) == 8);

constexpr size_t kChallengeMessageBytes =
    sizeof(wire::FrameHeader) + sizeof(wire::ChallengePayload) + sizeof(OpeningTrailer);
constexpr size_t kHelloMessageBytes = sizeof(wire::FrameHeader) + sizeof(wire::HelloPayload);

enum class ControlType : uint32_t {
  kCredit = 1,  // the receiver's cumulative grants
  kClose = 2,   // the sender closed or aborted the link, after frames_granted frames sent whole
};

// Credits are cumulative, so a later message replaces an earlier one. The
// sender may start frame f while f < frames_granted, and while its frame
// bytes so far plus the frame's stay within bytes_read + bytes_budget (or
// when at most a quarter of the budget is unread); bytes_budget 0: no limit.
// bytes_read counts the frames the receiver's reader took and those in its
// receive window, so frames it holds beyond the window count against the
// budget, as unread bytes in a TCP socket's receive buffer do.
// A closing notice carries instead, in frames_granted, how many frames its
// sender had sent whole (every message completed): the receiver delivers
// those, which may still be arriving, before it fails the link.
struct Control {
  uint32_t magic;  // wire::kMagic
  uint32_t type;   // ControlType
  uint64_t frames_granted;
  uint64_t bytes_read;
  uint64_t bytes_budget;
};
static_assert(sizeof(Control) == 32);

}  // namespace omnib::fabric_wire
