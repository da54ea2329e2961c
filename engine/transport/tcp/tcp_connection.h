// Connection over a connected TCP socket, driven by the process's IoLoop: the
// loop reads frames into a bounded inbox and writes posted frames as the
// socket takes them, so any number of links costs one network thread.
// Owns the fd.
//
// Flow control: while the inbox holds recv_window() frames the loop stops
// reading the socket (past them it holds at most its 64 KiB look-ahead),
// and TCP's own window holds the sender back. With a byte budget
// (set_windows' inflight_bytes) the receiver sends credits
// (wire::kCredit) saying what its reader took, and the sender keeps the
// frames it starts within that plus the budget, so the bytes in flight or
// unread towards this end stay within the budget whatever the kernel's
// buffers hold; the loop then reads on past recv_window() frames, so that
// a credit behind them is not held up.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "engine/transport/connection.h"
#include "engine/transport/tcp/io_loop.h"

namespace omnib {

class TcpConnection final : public Connection, private IoLoop::Handler {
 public:
  // `fd` must be connected and configured (configure_stream_socket); the
  // opening frames (challenge, hello) must already be read: from here on the
  // loop reads it. Every blocking wait ends after `timeout` (kTimeout).
  TcpConnection(int fd, int peer_rank, uint32_t job_id, std::chrono::milliseconds timeout);
  ~TcpConnection() override;
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  Status send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) override;
  Status recv(Frame& frame) override;
  Result<bool> try_recv(Frame& frame) override;
  Result<std::optional<uint64_t>> post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                       std::span<const iovec> parts) override;
  uint64_t sends_done() const override;
  Status health() const override;
  void set_wakers(Waker* on_receive, Waker* on_send) override;
  void set_windows(size_t recv_frames, size_t send_frames, size_t inflight_bytes) override;
  size_t recv_window() const override;
  size_t send_window() const override;
  ByteCounters counters() const override {
    return {sent_.load(), received_.load(), frames_sent_.load(), frames_received_.load()};
  }
  bool on_wire() const override { return true; }
  void abort() override;
  int peer_rank() const override { return peer_rank_; }

 private:
  struct Outgoing {
    wire::FrameHeader header;
    std::vector<iovec> iov;  // header first, then the caller's parts
    size_t next = 0;         // first iovec not fully written
    uint64_t ticket = 0;
    bool started = false;    // some of it is written: nothing may go between its bytes
  };
  // The next credit to send; it goes between frames, never inside one.
  struct CreditFrame {
    wire::FrameHeader header;
    size_t written = 0;  // bytes of the header written
    bool pending = false;
  };

  void on_ready(uint32_t events) override;
  // With mu_ held.
  void read_available_locked();
  // Where the next bytes of the frame being read go.
  iovec frame_room_locked();
  // `n` bytes went there: a header checked, a credit taken, a frame
  // delivered. False once the link failed.
  bool frame_bytes_in_locked(size_t n);
  void write_available_locked();
  void fail_locked(Status why);
  void fail_send_locked(int err);  // a send's errno
  // Credits. Receive side: what the reader took or holds in its window; the
  // frames the loop reads before it stops; whether a credit is due, and
  // queueing it. Send side: whether the peer's credit lets `o` start;
  // taking a credit that arrived; writing the queued one.
  uint64_t bytes_read_locked() const;
  size_t read_limit_locked() const;
  bool credit_due_locked() const;
  bool queue_credit_if_due_locked();
  bool credit_allows_locked(const Outgoing& o) const;
  Status take_credit_locked(const wire::FrameHeader& credit);
  bool write_credit_locked();
  void notify_locked(bool received, bool sent);
  Status state_error_locked() const;

  const int fd_;
  const int peer_rank_;
  const uint32_t job_id_;
  const std::chrono::milliseconds timeout_;
  const std::string name_;

  mutable std::mutex mu_;
  std::condition_variable changed_;  // blocking send/recv waiters
  bool registered_ = false;

  // Receive side.
  std::deque<Frame> inbox_;
  size_t recv_window_ = 16;
  Frame reading_;  // the frame being read
  size_t have_ = 0;  // bytes of it read so far, header included
  // Each read also fills this with what follows the frame being read (the
  // next frames' headers, small frames, credits), so that a wake-up costs
  // one read, not a read per header and per payload and one more to learn
  // that the socket is empty. Bytes [spill_at_, spill_end_) are read and
  // not yet taken; at most its size beyond a full inbox.
  UninitBytes spill_;
  size_t spill_at_ = 0;
  size_t spill_end_ = 0;
  bool peer_hung_up_ = false;  // read to EOF: a short read no longer says the socket is empty
  std::vector<UninitBytes> spare_payloads_;
  uint64_t budget_ = 0;             // bytes the peer may have beyond what the reader took; 0: none
  uint64_t bytes_taken_ = 0;        // frame bytes the reader took
  uint64_t bytes_arrived_ = 0;      // frame bytes read off the socket (credits aside)
  uint64_t advertised_read_ = 0;    // the last credit's bytes_read
  uint64_t advertised_budget_ = 0;  // and its budget
  CreditFrame credit_out_;

  // Send side.
  std::deque<Outgoing> outbox_;
  size_t send_window_ = 16;
  uint64_t posted_ = 0;
  uint64_t done_ = 0;
  uint64_t bytes_started_ = 0;  // frame bytes whose writing began
  uint64_t peer_read_ = 0;      // from the peer's latest credit
  uint64_t peer_budget_ = 0;    // 0: the peer set no budget

  Status failure_;  // set once: the link is dead
  bool aborted_ = false;
  Waker* receive_waker_ = nullptr;
  Waker* send_waker_ = nullptr;

  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> received_{0};
  std::atomic<uint64_t> frames_sent_{0};
  std::atomic<uint64_t> frames_received_{0};
};

}  // namespace omnib
