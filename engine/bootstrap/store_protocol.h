// The rendezvous store's wire format (version 2). Prose and limits:
// docs/wire-format.md, "Rendezvous store protocol". Integers little-endian.
//
//   server -> client  StoreGreeting              magic, version, server nonce
//   client -> server  StoreClientProof           client nonce, HMAC proving the job token
//   server -> client  StoreServerProof           HMAC proving the server holds it too
//   then, one at a time:
//   client -> server  StoreRequest, key, value
//   server -> client  StoreReply, payload
//
// A client that fails its proof is closed without a reply. The server reads
// nothing else before the proof, so a client without the token cannot reach
// any operation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/auth/job_token.h"
#include "engine/base/status.h"

namespace omnib::store_wire {

constexpr uint32_t kMagic = 0x53424d4f;       // "OMBS"
constexpr uint32_t kReplyMagic = 0x52424d4f;  // "OMBR"
constexpr uint16_t kVersion = 2;

// HMAC labels: a proof made for one direction or protocol is useless in another.
constexpr std::string_view kClientLabel = "omni-bench store client v2";
constexpr std::string_view kServerLabel = "omni-bench store server v2";

struct StoreGreeting {
  uint32_t magic;
  uint16_t version;
  uint16_t reserved;
  Nonce nonce;
};
static_assert(sizeof(StoreGreeting) == 24);

struct StoreClientProof {
  Nonce nonce;
  Mac mac;  // HMAC(token, kClientLabel, server nonce, client nonce)
};
static_assert(sizeof(StoreClientProof) == 48);

struct StoreServerProof {
  Mac mac;  // HMAC(token, kServerLabel, server nonce, client nonce)
};
static_assert(sizeof(StoreServerProof) == 32);

// Values are part of the wire format. 3 was the counter `add` of version 1,
// retired: barriers are counted by the server.
enum class Op : uint8_t {
  kSet = 1,      // key = value (overwrites)
  kGet = 2,      // waits until key exists; reply: the value
  kBarrier = 4,  // key = barrier name; returns when `world` callers arrived
  kGather = 5,   // key = gather name, value = this rank's part; see GatherFlags
  kAbort = 6,    // the job failed: value = message, rank = who failed
};

enum GatherFlags : uint8_t {
  kToRoot = 0,     // rank 0 gets every part (in rank order); the others an empty reply at once
  kEveryone = 1,   // every rank gets every part
};

struct StoreRequest {
  uint32_t magic;
  uint8_t op;         // Op
  uint8_t flags;      // kGather: GatherFlags
  uint16_t reserved;  // 0
  uint32_t key_len;
  uint32_t rank;      // kGather, kAbort: the caller's rank
  uint32_t world;     // kBarrier, kGather: how many ranks take part
  uint32_t reserved2; // 0
  uint64_t value_len;
};
static_assert(sizeof(StoreRequest) == 32);

enum class ReplyStatus : uint8_t {
  kOk = 0,
  kAborted = 1,  // a rank posted a failure: payload = "rank R failed: message"
  kRefused = 2,  // the request broke a limit or a rule: payload says which
};

struct StoreReply {
  uint32_t magic;  // kReplyMagic
  uint8_t status;  // ReplyStatus
  uint8_t reserved[3];
  uint64_t length;  // payload bytes that follow
};
static_assert(sizeof(StoreReply) == 16);

// A request header for `op` (key_len and value_len still 0).
StoreRequest make_request(Op op, uint32_t rank = 0, uint32_t world = 0, uint8_t flags = 0);

// A gather reply's payload: for each rank in order, uint64 length then bytes.
std::string encode_parts(const std::vector<std::string>& parts);
// Checks that `payload` holds exactly `world` parts.
Result<std::vector<std::string>> decode_parts(std::string_view payload, int world);

}  // namespace omnib::store_wire

namespace omnib {

// What the server accepts; every request is checked against these before
// anything is allocated for it. Defaults are documented in docs/wire-format.md.
struct StoreLimits {
  uint32_t max_key_bytes = 4096;
  uint64_t max_value_bytes = uint64_t{64} << 20;
  // Keys, values, gather parts, requests being received and replies being
  // sent, all together.
  uint64_t max_buffered_bytes = uint64_t{1} << 30;
  uint32_t max_world = 1u << 20;
  int max_connections = 4096;
  // A connection that has not proved the token by then is closed.
  int handshake_timeout_ms = 10000;
};

}  // namespace omnib
