// The state of one fabric link, shared by its FabricConnection (the calls
// of the Connection API, on any thread) and the endpoint's progress thread
// (every libfabric call, and the completions). The endpoint keeps it alive
// while any of its operations is out, so the Connection may go first.
//
// fabric_link.cc: the send side, credits and failure; fabric_link_receive.cc:
// the receive side. The protocol is in fabric_wire.h.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/transport/fabric/fabric_connection.h"
#include "engine/sockets/socket_util.h"

namespace omnib {

class FabricLink final : public FabricOpOwner, public std::enable_shared_from_this<FabricLink> {
 public:
  FabricLink(std::shared_ptr<FabricEndpoint> endpoint, const FabricPeer& peer, uint32_t job_id,
             std::chrono::milliseconds timeout);

  // Grants the first credits (any thread, once).
  void start() { schedule_pump(); }

  // ---- The Connection API (any thread).
  Result<std::optional<uint64_t>> post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                       std::span<const iovec> parts, bool copy, SteadyClock::time_point deadline);
  Result<bool> try_recv(Frame& frame);
  Status recv(Frame& frame);
  uint64_t sends_done() const;
  Status health() const;
  void set_wakers(Waker* on_receive, Waker* on_send);
  void set_windows(size_t recv_frames, size_t send_frames, size_t inflight_bytes);
  size_t recv_window() const;
  size_t send_window() const;
  ByteCounters counters() const {
    return {sent_.load(), received_.load(), frames_sent_.load(), frames_received_.load()};
  }
  // Fails the link and tells the peer. `why` is what later calls report.
  void close(const std::string& why);
  // Waits (until `deadline`) until no send reads the caller's memory.
  void wait_lent_memory(SteadyClock::time_point deadline);
  // Waits (until `deadline`) until every frame posted so far has been sent
  // whole, or the link failed.
  void wait_sends_done(SteadyClock::time_point deadline);
  FabricConnection::SendPaths send_paths() const;
  int peer_rank() const { return peer_.rank; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // ---- The progress thread.
  void on_done(FabricOp& op, size_t len, uint64_t tag) override;
  void on_failed(FabricOp& op, bool canceled, const std::string& why) override;
  void pump() override;

 private:
  enum OpKind : uint32_t { kHeadRecv = 1, kRestRecv, kControlRecv, kHeadSend, kRestSend, kControlSend };
  struct Outgoing {
    uint64_t ticket = 0;
    wire::FrameHeader header{};
    std::vector<iovec> parts;  // the payload: the caller's memory, or the staging copy
    RegisteredBytes staging;
    bool copied = false;
    uint64_t frame = 0;      // frame number on the link, once started
    uint32_t messages = 0;   // head + rest parts; 0: not started
    uint32_t posted = 0;     // messages handed to the provider
    uint32_t finished = 0;   // messages completed
    uint64_t bytes() const { return sizeof(wire::FrameHeader) + header.length; }
  };
  struct Incoming {
    enum class State { kHead, kRest, kComplete };
    State state = State::kHead;
    Frame frame;
    RegisteredBytes bounce;  // local registration: the rest lands here first
    uint32_t parts = 0, posted = 0, left = 0;
  };

  void schedule_pump();
  void fail_locked(Status why);
  // True when the provider took an op (rc 0). Otherwise false, and: after
  // -FI_EAGAIN, a pump is due once progress was made; else the link fails.
  bool took_locked(ssize_t rc, const char* what);
  void notify_locked(bool received, bool sent);
  uint32_t rest_parts(uint64_t length) const;
  size_t rest_part_bytes(uint64_t length, uint32_t part) const;
  // Send side (progress thread, mu_ held).
  bool credit_allows(const Outgoing& o) const;
  bool start_next_locked();
  Outgoing* outgoing_locked(uint64_t ticket);
  // Gives back what a finished or failed send op of `o` held.
  void release_send_locked(FabricOp& op, Outgoing* o);
  void on_send_done_locked(FabricOp& op);
  // Receive side (progress thread, mu_ held).
  void post_receives_locked();
  bool post_rest_receives_locked(Incoming& in, uint64_t frame);
  // Frames the peer may send beyond those taken: the receive window, plus,
  // with a byte budget, head receives for the small frames it may hold.
  uint64_t grant_window_locked() const;
  // Bytes of the frames taken or in the first recv_window_ of the inbox:
  // what a TCP reader would have read off its socket.
  uint64_t bytes_read_locked() const;
  // Whether a credit for a grant of `grant` frames is worth a message now.
  bool credit_due_locked(uint64_t grant) const;
  void maybe_send_credit_locked();
  bool send_control_locked(fabric_wire::ControlType type);
  void on_head_locked(FabricOp& op, size_t len);
  void on_rest_locked(FabricOp& op, size_t len);
  void on_control_locked(FabricOp& op, size_t len);
  void deliver_locked();
  // Fails the link once the frames a closing peer sent whole are delivered.
  void fail_when_peer_done_locked();
  void cancel_receives_locked();

  const std::shared_ptr<FabricEndpoint> ep_;
  const FabricPeer peer_;
  const uint32_t job_id_;
  const std::chrono::milliseconds timeout_;
  const std::string name_;
  const bool mr_local_;
  std::atomic<bool> pump_queued_{false};

  mutable std::mutex mu_;
  std::condition_variable changed_;
  Status failure_;             // set once: the link is dead
  bool closing_ = false;       // this end closed or aborted: tell the peer
  bool close_sent_ = false;
  Waker* receive_waker_ = nullptr;
  Waker* send_waker_ = nullptr;

  // Receive side. Frames [taken_, granted_) have a head receive posted or
  // arrived; [delivered_, granted_) are in arriving_, the rest in inbox_.
  // Credits grant frames up to taken_ + grant_window_locked(), and bytes up
  // to bytes_read_locked() + inflight_budget_ (fabric_wire.h).
  size_t recv_window_ = 16;
  uint64_t inflight_budget_ = 0;
  uint64_t taken_ = 0, delivered_ = 0, granted_ = 0, heads_seen_ = 0;
  std::deque<Incoming> arriving_;
  std::deque<Frame> inbox_;
  std::vector<UninitBytes> spare_payloads_;
  std::vector<RegisteredBytes> spare_bounce_;
  uint64_t bytes_arrived_ = 0, bytes_taken_ = 0;
  uint64_t advertised_frames_ = 0, advertised_bytes_ = 0, advertised_budget_ = 0;
  bool credit_in_flight_ = false;
  std::optional<uint64_t> peer_closed_after_;  // frames the peer sent whole before it closed
  size_t control_receives_ = 0;
  std::unordered_set<FabricOp*> receives_;  // posted, to cancel on failure

  // Send side. outbox_[0, started_) are started; tickets are consecutive.
  size_t send_window_ = 16;
  uint64_t posted_ = 0, done_ = 0;
  std::deque<Outgoing> outbox_;
  size_t started_ = 0;
  uint64_t next_frame_ = 0, bytes_started_ = 0;
  uint64_t peer_frames_ = 0, peer_read_ = 0, peer_budget_ = 0;
  std::vector<RegisteredBytes> spare_staging_;
  size_t lent_messages_ = 0;  // rest messages out that read the caller's memory
  FabricConnection::SendPaths paths_;

  std::atomic<uint64_t> sent_{0}, received_{0}, frames_sent_{0}, frames_received_{0};
};

}  // namespace omnib
