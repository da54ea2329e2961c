// The frames a fabric link sends. post() queues a frame, from the caller's
// memory when the provider can take it as it is (no local registration
// needed, at most iov_limit() parts, one rest message) or else from a
// registered staging copy; the progress thread starts each frame once the
// peer has credit for it (its frame grant and byte budget): a head message
// (the header, and the payload when it fits) and, for a longer payload, its
// rest messages. A frame is done when every message of it completed.
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "engine/transport/connection_core.h"
#include "engine/transport/fabric/fabric_endpoint.h"

namespace omnib {

class FabricLink;

// Frames sent from the caller's memory and from a copy so far.
struct FabricSendPaths {
  uint64_t zero_copy = 0;
  uint64_t copied = 0;
};

class FabricSender {
 public:
  explicit FabricSender(FabricLink& link);

  // Any thread (one sender at a time). `copy`: a blocking send, which
  // waits for window room until `deadline` and always copies, so that the
  // caller may reuse its memory at once.
  Result<std::optional<uint64_t>> post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                       std::span<const iovec> parts, bool copy, ConnectionCore::Clock::time_point deadline);
  FabricSendPaths paths() const;
  // Waits (until `deadline`) until no send reads the caller's memory.
  void wait_lent_memory(ConnectionCore::Clock::time_point deadline);
  // Waits (until `deadline`) until every frame posted so far has been sent
  // whole, or the link failed.
  void wait_sends_done(ConnectionCore::Clock::time_point deadline);

  // ---- The progress thread (mu held).
  // Starts the frames the peer has credit for.
  void start_waiting_locked();
  // The peer's grant: frames [0, frames) may start.
  void granted_locked(uint64_t frames);
  void on_done_locked(FabricOp& op);
  void on_failed_locked(FabricOp& op);

 private:
  struct Outgoing {
    uint64_t ticket = 0;
    wire::FrameHeader header{};
    std::vector<iovec> parts;  // the payload: the caller's memory, or the staging copy
    RegisteredBytes staging;
    bool copied = false;
    uint64_t frame = 0;     // frame number on the link, once started
    uint32_t messages = 0;  // head + rest parts; 0: not started
    uint32_t posted = 0;    // messages handed to the provider
    uint32_t finished = 0;  // messages completed
    uint64_t bytes() const { return wire::frame_bytes(header); }
  };

  // Fills `o` with the frame's parts: lent, or copied into staging.
  void fill(Outgoing& o, std::span<const iovec> parts, bool lend);
  // Starts (or goes on starting, after the provider said "again") the first
  // frame not yet handed over. False when it cannot go further now.
  bool start_next_locked();
  // Marks `o` started: registered staging, a frame number, its messages.
  bool begin_locked(Outgoing& o);
  ssize_t post_head_locked(Outgoing& o);
  ssize_t post_rest_locked(Outgoing& o, uint32_t part);
  Outgoing* outgoing_locked(uint64_t ticket);
  // Gives back what a finished or failed send op of `o` held.
  void release_locked(FabricOp& op, Outgoing* o);

  FabricLink& link_;
  const bool mr_local_;
  // outbox_[0, started_) are started; tickets are consecutive.
  std::deque<Outgoing> outbox_;
  size_t started_ = 0;
  uint64_t next_frame_ = 0;
  uint64_t peer_frames_ = 0;  // the peer's grant
  std::vector<RegisteredBytes> spare_staging_;
  size_t lent_messages_ = 0;  // rest messages out that read the caller's memory
  FabricSendPaths paths_;
};

}  // namespace omnib
