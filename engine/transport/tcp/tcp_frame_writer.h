// Writes a TCP link's posted frames to its non-blocking socket as the socket
// takes them: whole frames one after another, each started only when the
// receiver's byte budget lets it (byte_budget.h), and the receiver's own
// credits (header-only kCredit frames) between frames, never inside one.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "engine/transport/connection_core.h"

namespace omnib {

class TcpFrameWriter {
 public:
  // Told when a credit left, so that the next one may be queued (mu held).
  class CreditSource {
   public:
    virtual ~CreditSource() = default;
    virtual void credit_written_locked() = 0;
  };

  TcpFrameWriter(int fd, ConnectionCore& core, CreditSource& credits) : fd_(fd), core_(core), credits_(credits) {}

  // Queues frame `ticket`: `header`, then the caller's parts (their memory
  // must stay valid until the ticket is done). True when it is the only
  // frame queued.
  bool queue_locked(const wire::FrameHeader& header, std::span<const iovec> parts, uint64_t ticket);
  // Queues a credit to go at the next frame boundary. False while the
  // last one is half written (it goes out as it is; the next follows it).
  bool queue_credit_locked(const wire::FrameHeader& credit);
  // Writes until the socket is full, nothing is queued, or the budget holds
  // the next frame back. Finished frames finish their tickets in the core;
  // a write error fails it.
  void write_available_locked();
  // Credits that went in one system call with the frame after them.
  uint64_t credits_with_frames() const { return credits_with_frames_; }

 private:
  struct Outgoing {
    wire::FrameHeader header;
    std::vector<iovec> iov;  // header first, then the caller's parts
    size_t next = 0;         // first iovec not fully written
    uint64_t ticket = 0;
    bool started = false;  // some of it is written: nothing may go between its bytes
  };
  struct CreditFrame {
    wire::FrameHeader header;
    size_t written = 0;  // bytes of the header written
    bool pending = false;
  };

  // Whether the budget lets the front frame start.
  bool front_may_start() const;
  void start_front();
  // Writes what it can of the front frame. False when writing must stop.
  bool write_front();
  // The pending credit and, in the same system call, the front frame,
  // which may start. False when writing must stop.
  bool write_credit_and_front();
  // Counts `bytes` of the front frame written; pops it when whole.
  void front_written(size_t bytes);
  // After a failed write (errno): true to try again, false to stop.
  bool write_failed();
  // False when the credit could not be written whole now.
  bool write_credit();
  void credit_written();
  void fail_send(int err);

  const int fd_;
  ConnectionCore& core_;
  CreditSource& credits_;
  std::deque<Outgoing> outbox_;
  CreditFrame credit_;
  uint64_t credits_with_frames_ = 0;
};

}  // namespace omnib
