// The store server's loop, shared by its two halves: tcp_store_server.cc
// (the libuv loop, accepting, admitting and closing connections, writing)
// and tcp_store_requests.cc (what clients send: proofs and requests).
// Private to those files.
#pragma once

#include <uv.h>

#include <atomic>
#include <list>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/bootstrap/store_state.h"
#include "engine/bootstrap/tcp_store_server.h"

namespace omnib {

// Everything the loop thread owns. Only `post_abort`, `stop` and the stats
// atomics are touched from other threads.
class TcpStoreServer::Loop {
 public:
  using Op = store_wire::Op;
  using ReplyStatus = store_wire::ReplyStatus;
  using StoreRequest = store_wire::StoreRequest;

  static constexpr int kAcceptPauseMs = 100;   // out of descriptors: look again after this
  static constexpr int kSweepMs = 250;         // how often late handshakes are looked for
  static constexpr int kAcceptsPerWake = 128;  // then let the loop serve the others
  static constexpr size_t kReadChunk = 64 << 10;
  // A client reads each reply before its next request; one that keeps sending
  // while this much of its replies sits unsent is closed.
  static constexpr size_t kMaxUnreadReplyBytes = 4 << 20;

  Loop(const JobToken& token, const StoreLimits& limits) : token_(token), limits_(limits), state_(limits) {}

  Status open(int listen_fd);
  void start() {
    thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
  }
  // Closes every connection and joins the loop thread.
  void stop();
  void post_abort(int rank, const std::string& message);
  StoreStats stats() const;
  ~Loop();

 private:
  // kDiscard: the request was refused for the buffer cap; its body is read
  // and dropped, so the client gets the refusal and keeps its connection.
  // kWaiting: the request waits in the store (a get, barrier or gather); the
  // client sends nothing until its reply, so bytes now break the protocol.
  // The next request may arrive as soon as a reply is queued.
  enum class Phase { kProof, kHeader, kBody, kDiscard, kWaiting };
  struct Conn {
    uv_tcp_t tcp;
    Loop* loop;
    StoreState::ConnId id;
    Phase phase = Phase::kProof;
    Nonce nonce{};
    std::string in;  // the proof, header or body being assembled
    StoreRequest req{};
    uint64_t reserved = 0;  // bytes of this request's body counted against the buffer cap
    uint64_t discard_left = 0;
    bool closing = false;
    std::list<Conn*>::iterator handshaking;  // valid while phase == kProof
    SteadyClock::time_point accepted_at;
  };
  struct Write {
    uv_write_t req;
    Conn* conn;
    store_wire::StoreReply header;
    std::string bytes;  // greeting or proof
    std::shared_ptr<const std::string> payload;
    uint64_t size;
  };

  static void on_listener(uv_poll_t* h, int status, int events);
  static void on_resume(uv_timer_t* t);
  static void on_sweep(uv_timer_t* t);
  static void on_wakeup(uv_async_t* a);
  static void on_alloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf);
  static void on_written(uv_write_t* w, int status);
  static void on_conn_closed(uv_handle_t* h);

  void accept_some();
  void admit(int fd);
  void feed(Conn* c, const char* data, size_t n);
  void check_proof(Conn* c);
  void check_header(Conn* c);
  void dispatch(Conn* c);
  void deliver(const StoreState::Replies& replies);
  void refuse(Conn* c, const std::string& why);
  void send(Conn* c, Write* w, const uv_buf_t* bufs, unsigned count);
  void send_bytes(Conn* c, std::string bytes);
  // Every reply ends its request: the client may send the next one.
  void send_reply(Conn* c, ReplyStatus status, std::shared_ptr<const std::string> payload);
  void close_conn(Conn* c, bool rejected);
  void shut_down();
  void publish();

  JobToken token_;
  StoreLimits limits_;
  StoreState state_;
  uv_loop_t loop_{};
  uv_poll_t listener_{};
  int listen_fd_ = -1;
  uv_timer_t resume_{}, sweep_{};
  uv_async_t wakeup_{};
  std::unordered_map<StoreState::ConnId, Conn*> conns_;
  std::list<Conn*> handshaking_;  // oldest first
  StoreState::ConnId next_id_ = 1;
  uint64_t in_flight_ = 0;  // request bodies being received + replies being sent
  char read_buf_[kReadChunk];

  std::thread thread_;
  std::mutex mu_;
  bool stop_requested_ = false;
  std::vector<std::pair<int, std::string>> aborts_;

  std::atomic<uint64_t> s_keys_{0}, s_value_bytes_{0}, s_pending_{0}, s_waiters_{0}, s_buffered_{0}, s_open_{0},
      s_rejected_{0}, s_pauses_{0};
};

}  // namespace omnib
