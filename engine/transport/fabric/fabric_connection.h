// Connection over a libfabric reliable-datagram endpoint (fabric_endpoint.h),
// to one peer, in the tag space of one link (fabric_wire.h). The calls
// below make the libfabric calls a frame needs themselves when the
// endpoint's API lock is free (a frame posted, a credit due after a frame
// was taken), and otherwise leave them to its progress thread, so any
// number of links costs that one thread and a lane rarely waits for it.
//
// Receiving: the connection posts a head receive for each frame it lets the
// peer send (its credits: recv_window() frames, less the frames it holds)
// and tells the peer its cumulative grant. A frame's payload lands in a
// reused buffer that becomes the Frame handed out. With inflight_bytes set,
// the peer may also have at most that many bytes in flight towards this end
// or held here beyond the window (one frame more when at most a quarter of
// it is unread), as in a TCP socket's receive buffer; the connection then
// grants one more head receive per 4 KiB of it (at most 64), so that small
// frames flow a budget per credit round trip rather than a window's worth.
// The first grant leaves as the link opens, with the default window (16
// frames, no byte budget): windows set later hold once the frames granted
// before them have been taken, as a socket's buffer holds what arrived
// before its reader slowed. Credit messages are
// transport overhead, like TCP's window updates: not counted in counters().
//
// Sending: post() sends from the caller's memory when the provider can (no
// local registration needed, and at most iov_limit() parts), else from a
// copy; send() always copies, then returns, as TCP's kernel does, so the
// caller may reuse its memory at once. A frame waits in the connection
// until the peer has credit for it. Bytes and frames count as sent when a
// frame is accepted, and as received when it has arrived whole.
//
// Failure: a peer that closes or aborts its end says so, with the number
// of frames it sent whole; once those are here every waiter wakes with
// kUnavailable (frames it had sent whole but that never come leave the wait
// to its deadline); a send that the provider cannot deliver
// (a dead peer) does the same. A peer that dies silently is noticed by the
// deadline of whoever waits on it (kTimeout).
#pragma once

#include <chrono>
#include <memory>

#include "engine/transport/fabric/fabric_endpoint.h"
#include "engine/transport/fabric/fabric_sender.h"
#include "engine/transport/framed_connection.h"

namespace omnib {

class FabricLink;

class FabricConnection final : public FramedConnection {
 public:
  // The peer's address must be in the endpoint's table. Every blocking
  // wait ends after `timeout` (kTimeout).
  FabricConnection(std::shared_ptr<FabricEndpoint> endpoint, const FabricPeer& peer, uint32_t job_id,
                   std::chrono::milliseconds timeout);
  // Lets the frames queued so far leave (waiting at most a second), tells
  // the peer, and waits (at most a second more) until the provider is done
  // with memory that post() lent it.
  ~FabricConnection() override;

  Status send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) override;
  // A frame taken may make a credit due: sent from here when it is.
  Status recv(Frame& frame) override;
  Result<bool> try_recv(Frame& frame) override;
  Result<std::optional<uint64_t>> post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                       std::span<const iovec> parts) override;
  void abort() override;

  // Frames sent from the caller's memory and from a copy so far.
  FabricSendPaths send_paths() const;

 private:
  ConnectionCore& core() const override;

  std::shared_ptr<FabricLink> link_;
};

}  // namespace omnib
