// The frame format every omni-bench transport speaks. Prose: docs/wire-format.md.
//
// A frame is a fixed 32-byte header followed by `length` payload bytes. All
// integers are little-endian (the only byte order we build for).
#pragma once

#include <cstddef>
#include <cstdint>

namespace omnib::wire {

constexpr uint32_t kMagic = 0x424e4d4f;  // "OMNB" as bytes on the wire
// 2: links open with a challenge and an authenticated hello.
// 3: TCP links carry credits (kCredit).
// 4: block batches may list 16-bit offsets (encoding 3, offsets16).
constexpr uint16_t kVersion = 4;
// Upper bound for one frame's payload; a header announcing more is rejected
// before any allocation, so a corrupt or hostile peer cannot exhaust memory.
constexpr uint64_t kMaxPayload = uint64_t{1} << 30;

// What a frame carries. Values are part of the wire format: append only.
enum class FrameType : uint16_t {
  kHello = 1,        // the dialer's first frame on a link: HelloPayload
  kBlocks = 2,       // worker -> shard: a batch of non-zero blocks (BlockBatch)
  kResult = 3,       // shard -> worker: a batch of reduced blocks (BlockBatch)
  kDense = 4,        // a dense slice of a tensor (ring and other baselines)
  kSparse = 5,       // an index/value list (sparse baselines)
  kControl = 6,      // small control messages
  kChallenge = 7,    // the acceptor's first frame on a link: ChallengePayload
  kCredit = 8,       // TCP flow control, receiver -> sender: a header alone (not a collective's frame)
};

struct FrameHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t type;    // FrameType
  uint32_t job_id;  // random per run: frames from another run are rejected
  uint32_t tag;     // which logical stream of the link (collective-defined)
  uint64_t seq;     // collective sequence number
  uint64_t length;  // payload bytes that follow
};
static_assert(sizeof(FrameHeader) == 32, "the header is 32 bytes on the wire");

// The payload a streaming sender aims for per frame (omni's largest batch,
// the ring's and tree's pipeline steps, the sparse baselines' chunks): long
// enough that the 32-byte header and a wake-up per frame cost little, short
// enough that a pipeline fills at once.
inline constexpr size_t kStreamFrameBytes = 256 << 10;

// A credit (kCredit) is a header with no payload: a TCP link's receiver,
// once it has a byte budget, tells its sender in `seq` the frame bytes
// (headers included) its reader took or holds in its window, and in `tag`
// the budget (0: no limit); the sender keeps the frame bytes it starts
// within their sum (docs/wire-format.md, "Credits on TCP links"). One
// header is one read for the sender, where a payload would be a second.

// Bytes a frame takes on the wire: its header and its payload.
constexpr uint64_t frame_bytes(const FrameHeader& h) { return sizeof(FrameHeader) + h.length; }

// Sent by the accepting rank as soon as it accepts: a fresh nonce the dialer
// must prove the job token over.
struct ChallengePayload {
  uint8_t nonce[16];
};
static_assert(sizeof(ChallengePayload) == 16);

// The dialer's answer. The frame's tag is the link plan number. `mac` is
// HMAC-SHA256(job token, "omni-bench link v2", job_id, tag, rank, link_id,
// acceptor rank, nonce), all integers as uint32 (engine/transport/link_hello.cc).
struct HelloPayload {
  uint32_t rank;     // the dialing rank
  uint32_t link_id;  // which link of the plan this connection is
  uint8_t mac[32];
};
static_assert(sizeof(HelloPayload) == 40);

}  // namespace omnib::wire
