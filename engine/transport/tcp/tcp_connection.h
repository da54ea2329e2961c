// Connection over a connected TCP socket, driven by the process's IoLoop: the
// loop reads frames into a bounded inbox (tcp_frame_reader.h) and writes
// posted frames as the socket takes them (tcp_frame_writer.h), so any number
// of links costs one network thread. Owns the fd.
//
// Flow control: while the inbox holds recv_window() frames the loop stops
// reading the socket (past them it holds at most its 64 KiB look-ahead),
// and TCP's own window holds the sender back. With a byte budget
// (set_windows' inflight_bytes) the receiver sends credits
// (wire::kCredit) saying what its reader took, and the sender keeps the
// frames it starts within that plus the budget (byte_budget.h), so the
// bytes in flight or unread towards this end stay within the budget
// whatever the kernel's buffers hold; the loop then reads on past
// recv_window() frames, so that a credit behind them is not held up.
#pragma once

#include <chrono>

#include "engine/transport/framed_connection.h"
#include "engine/transport/tcp/io_loop.h"
#include "engine/transport/tcp/tcp_frame_reader.h"
#include "engine/transport/tcp/tcp_frame_writer.h"

namespace omnib {

class TcpConnection final : public FramedConnection,
                            private IoLoop::Handler,
                            private ConnectionCore::Hooks,
                            private TcpFrameReader::CreditSink,
                            private TcpFrameWriter::CreditSource {
 public:
  // `fd` must be connected and configured (configure_stream_socket); the
  // opening frames (challenge, hello) must already be read: from here on the
  // loop reads it. Every blocking wait ends after `timeout` (kTimeout).
  TcpConnection(int fd, int peer_rank, uint32_t job_id, std::chrono::milliseconds timeout);
  ~TcpConnection() override;

  Status send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) override;
  Result<std::optional<uint64_t>> post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                       std::span<const iovec> parts) override;
  void abort() override;

  // Credits this end sent in one system call with a frame of its own.
  uint64_t credits_sent_with_frames() const;

 private:
  ConnectionCore& core() const override { return core_; }
  void on_ready(uint32_t events) override;
  // on_ready's work under the lock: what it received and finished sending.
  void read_and_write_locked(uint32_t events, bool& received, bool& sent);
  void frame_taken_locked(size_t held_before) override;
  std::string partial_frame_locked() const override;
  void windows_changed_locked() override;
  Status take_credit_locked(const wire::FrameHeader& credit) override;
  void credit_written_locked() override { queue_credit_if_due_locked(); }

  // How many frames the loop reads before it stops: the window, or with a
  // budget every frame (the sender's credits bound what arrives).
  size_t read_limit_locked() const;
  // Queues a credit when one is due (the budget's rule); true when it did.
  bool queue_credit_if_due_locked();

  const int fd_;
  mutable ConnectionCore core_;
  TcpFrameReader reader_;
  TcpFrameWriter writer_;
  bool registered_ = false;  // with the IoLoop
  bool aborted_ = false;
};

}  // namespace omnib
