// A connection whose state is a ConnectionCore (connection_core.h): the
// Connection calls that only take from the core, read it or set its
// windows, forwarded to it, so that each transport writes only its own:
// sending and abort.
#pragma once

#include "engine/transport/connection.h"
#include "engine/transport/connection_core.h"

namespace omnib {

class FramedConnection : public Connection {
 public:
  FramedConnection() = default;
  FramedConnection(const FramedConnection&) = delete;
  FramedConnection& operator=(const FramedConnection&) = delete;

  Status recv(Frame& frame) override { return core().recv(frame); }
  Result<bool> try_recv(Frame& frame) override { return core().try_recv(frame); }
  uint64_t sends_done() const override { return core().sends_done(); }
  Status health() const override { return core().health(); }
  void set_wakers(Waker* on_receive, Waker* on_send) override { core().set_wakers(on_receive, on_send); }
  void set_windows(size_t recv_frames, size_t send_frames, size_t inflight_bytes) override {
    core().set_windows(recv_frames, send_frames, inflight_bytes);
  }
  size_t recv_window() const override { return core().recv_window(); }
  size_t send_window() const override { return core().send_window(); }
  ByteCounters counters() const override { return core().counters(); }
  bool on_wire() const override { return true; }
  int peer_rank() const override { return core().peer_rank(); }

 protected:
  virtual ConnectionCore& core() const = 0;
};

}  // namespace omnib
