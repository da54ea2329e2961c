// An in-process connection: a rank's worker talking to its own colocated
// shard. Frames are copied through a bounded queue (the receiving end's
// window); a posted frame is copied at once, so its send is finished when
// post() returns. Nothing is on the wire, so counters stay zero.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/transport/connection.h"

namespace omnib {

class LocalConnection final : public Connection {
 public:
  // Two connected ends. Each end's sends appear as the other end's receives.
  static std::pair<std::unique_ptr<LocalConnection>, std::unique_ptr<LocalConnection>> make_pair(
      int rank, std::chrono::milliseconds timeout, size_t max_queued_frames = 16);

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
  size_t send_window() const override { return recv_window(); }
  ByteCounters counters() const override { return {}; }
  bool on_wire() const override { return false; }
  void abort() override;
  int peer_rank() const override { return rank_; }

 private:
  // One direction: the frames one end sent and the other has not taken.
  struct Queue {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Frame> frames;
    size_t capacity = 16;  // the receiving end's window
    // Payload buffers handed back by the receiver, reused by the sender:
    // fresh ones would cost page faults on every frame.
    std::vector<UninitBytes> spare_payloads;
    uint64_t posted = 0;          // frames the sending end put in
    bool aborted = false;
    Waker* receiver_waker = nullptr;  // the receiving end's on_receive
    Waker* sender_waker = nullptr;    // the sending end's on_send: told when space frees
  };
  LocalConnection(int rank, std::chrono::milliseconds timeout, std::shared_ptr<Queue> in, std::shared_ptr<Queue> out)
      : rank_(rank), timeout_(timeout), in_(std::move(in)), out_(std::move(out)) {}
  // Copies the frame into `out_` if it has room; false when it is full.
  Result<bool> try_put(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts);
  std::string name() const { return "local link of rank " + std::to_string(rank_); }

  int rank_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<Queue> in_;
  std::shared_ptr<Queue> out_;
};

}  // namespace omnib
