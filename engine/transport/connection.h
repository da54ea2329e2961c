// The transport seam: one bidirectional, framed, byte-counted link between two
// ranks (or within one process). Implementations: tcp/tcp_connection (kernel
// sockets, driven by the process's IoLoop), fabric/fabric_connection
// (libfabric endpoints: verbs, EFA, tcp, shm) and local_connection (an
// in-process queue, for a rank's link to itself).
//
// Two ways to use it. Blocking: send() and recv(), as a lane that serves one
// link does. Non-blocking: post() and try_recv() plus a Waker, as a lane that
// serves many links does (it waits on one Waker for all of them).
//
// Flow control: a connection holds at most recv_window() received frames
// that nobody has taken; while it holds that many it stops reading, and the
// transport holds the sender back. At most send_window() posted frames are
// unfinished at a time. So memory is bounded by the windows, not the data.
//
// Threading: one thread may send while another receives on the same
// connection; two concurrent senders (or receivers) are not allowed.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/base/status.h"
#include "engine/transport/frame_format.h"
#include "engine/transport/waker.h"
#include "engine/base/uninit_buffer.h"

namespace omnib {

// What crossed the wire: bytes (frame headers included) and whole frames.
// For a given seed both are exact, so a CI gate can compare them exactly.
struct ByteCounters {
  uint64_t sent = 0;
  uint64_t received = 0;
  uint64_t frames_sent = 0;
  uint64_t frames_received = 0;
  ByteCounters operator-(const ByteCounters& o) const {
    return {sent - o.sent, received - o.received, frames_sent - o.frames_sent, frames_received - o.frames_received};
  }
  ByteCounters& operator+=(const ByteCounters& o) {
    sent += o.sent;
    received += o.received;
    frames_sent += o.frames_sent;
    frames_received += o.frames_received;
    return *this;
  }
};

// A received frame. `payload` is reused between receives to avoid allocation.
struct Frame {
  wire::FrameHeader header{};
  UninitBytes payload;
  wire::FrameType type() const { return static_cast<wire::FrameType>(header.type); }
};

class Connection {
 public:
  virtual ~Connection() = default;

  // Sends one frame whose payload is the concatenation of `parts`. Blocks until
  // the bytes are handed to the transport or the timeout passes (kTimeout).
  // The caller keeps ownership of the memory; it may be reused on return.
  virtual Status send(wire::FrameType type, uint32_t tag, uint64_t seq,
                      std::span<const iovec> parts) = 0;

  // Receives the next frame into `frame`, validating the header (magic,
  // version, job id, length). Blocks at most the timeout (kTimeout); a closed
  // peer gives kUnavailable.
  virtual Status recv(Frame& frame) = 0;

  // Bytes and frames this connection put on / took off the wire, headers
  // included. Zero for connections that never leave the process.
  virtual ByteCounters counters() const = 0;

  // True when bytes cross a network (counted as wire bytes).
  virtual bool on_wire() const = 0;

  // Unblocks any thread waiting in send or recv; later calls fail. Safe to call
  // from any thread, any number of times.
  virtual void abort() = 0;

  virtual int peer_rank() const = 0;

  // ---- Non-blocking use.

  // Takes the next received frame, if one is waiting, into `frame` (the
  // frame's old payload buffer is kept for reuse). false: nothing waiting.
  // An error once the link failed or was aborted and nothing is left.
  virtual Result<bool> try_recv(Frame& frame) = 0;

  // Starts sending one frame and returns its ticket (1, 2, 3, ...), or
  // nullopt when send_window() frames are unfinished. The memory `parts`
  // point to must stay valid and unchanged until sends_done() reaches the
  // ticket. An error once the link failed or was aborted.
  virtual Result<std::optional<uint64_t>> post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                               std::span<const iovec> parts) = 0;
  // Tickets whose bytes have all been handed to the transport.
  virtual uint64_t sends_done() const = 0;
  // Ok, or why the link failed (then every call fails the same way).
  virtual Status health() const = 0;

  // `on_receive` is told when a frame arrives or the link fails; `on_send`
  // when a send finishes or the link fails. Either may be null. Set them
  // before threads use the connection; they must outlive their use.
  virtual void set_wakers(Waker* on_receive, Waker* on_send) = 0;

  // Sizes the windows: received frames held, posted frames unfinished, and
  // (for transports that can) the bytes the peer may have in flight towards
  // this end, which bounds how hard many senders can hit one receiver.
  virtual void set_windows(size_t recv_frames, size_t send_frames, size_t inflight_bytes) = 0;
  virtual size_t recv_window() const = 0;
  virtual size_t send_window() const = 0;

  // Convenience for a single contiguous payload.
  Status send_bytes(wire::FrameType type, uint32_t tag, uint64_t seq, const void* data, size_t n) {
    iovec part{const_cast<void*>(data), n};
    return send(type, tag, seq, std::span<const iovec>(&part, n ? 1 : 0));
  }
};

// Fills a header for an outgoing frame.
wire::FrameHeader make_header(wire::FrameType type, uint32_t job_id, uint32_t tag, uint64_t seq,
                              uint64_t length);
// Checks a received header; the message names the peer and what was wrong.
Status validate_header(const wire::FrameHeader& h, uint32_t job_id, int peer_rank);

}  // namespace omnib
