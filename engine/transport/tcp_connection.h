// Connection over a connected TCP socket. Owns the fd. Every send and
// receive completes within `timeout` of its start or fails with kTimeout,
// however slowly the peer trickles bytes.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "engine/transport/connection.h"
#include "engine/transport/socket_util.h"

namespace omnib {

class TcpConnection final : public Connection {
 public:
  // `fd` must be connected and configured (configure_stream_socket); it may
  // be blocking or not.
  TcpConnection(int fd, int peer_rank, uint32_t job_id, std::chrono::milliseconds timeout);
  ~TcpConnection() override;
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  Status send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) override;
  Status recv(Frame& frame) override;
  ByteCounters counters() const override { return {sent_.load(), received_.load()}; }
  bool on_wire() const override { return true; }
  void abort() override;
  int peer_rank() const override { return peer_rank_; }

  // Names the peer once its hello has been read (accepted links start with
  // an unknown peer). Call before the connection is shared with other threads.
  void set_peer_rank(int rank);

 private:
  Status send_iovecs(iovec* iov, size_t count, SteadyClock::time_point deadline);

  int fd_;
  int peer_rank_;
  uint32_t job_id_;
  std::chrono::milliseconds timeout_;
  std::string name_;
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> received_{0};
  std::atomic<bool> aborted_{false};
};

}  // namespace omnib
