// An in-process connection: a rank's worker talking to its own colocated
// shard. Frames are copied through a bounded queue; nothing is on the wire,
// so counters stay zero.
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
  ByteCounters counters() const override { return {}; }
  bool on_wire() const override { return false; }
  void abort() override;
  int peer_rank() const override { return rank_; }

 private:
  struct Queue {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Frame> frames;
    // Payload buffers handed back by the receiver, reused by the sender:
    // fresh ones would cost page faults on every frame.
    std::vector<UninitBytes> spare_payloads;
    bool aborted = false;
  };
  LocalConnection(int rank, std::chrono::milliseconds timeout, size_t max_queued, std::shared_ptr<Queue> in,
                  std::shared_ptr<Queue> out)
      : rank_(rank), timeout_(timeout), max_queued_(max_queued), in_(std::move(in)), out_(std::move(out)) {}

  int rank_;
  std::chrono::milliseconds timeout_;
  size_t max_queued_;
  std::shared_ptr<Queue> in_;
  std::shared_ptr<Queue> out_;
};

}  // namespace omnib
