// The rendezvous store server: one thread running a libuv loop serves every
// client (the local launcher hosts it; under mpirun/srun/torchrun rank 0
// does). Protocol and limits: store_protocol.h, docs/wire-format.md.
//
// Bounded against anyone who can connect:
// - nothing but the 48-byte proof of the job token is read before the proof
//   checks out; a connection that fails it, or does not finish it within
//   StoreLimits::handshake_timeout_ms, is closed and counted;
// - every request is checked against the key, value and total-buffer limits
//   before anything is allocated for it, and its payload is buffered as it
//   arrives; one over the total-buffer cap is refused (its bytes are read and
//   dropped), one over the key or value limit (which clients check before
//   sending) closes its connection;
// - at StoreLimits::max_connections, a new connection pushes out the oldest
//   one still in its handshake, or is closed if there is none;
// - out of descriptors, accepting pauses for a moment (no busy loop) while
//   the connections already open keep being served.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/auth/job_token.h"
#include "engine/bootstrap/store_protocol.h"
#include "engine/sockets/socket_util.h"

namespace omnib {

struct StoreStats {
  uint64_t keys = 0;                  // plain keys held (set)
  uint64_t value_bytes = 0;           // bytes of keys, values and gather parts held
  uint64_t pending_collectives = 0;   // barriers and gathers in progress
  uint64_t waiters = 0;               // connections waiting for a reply
  uint64_t buffered_bytes = 0;        // value_bytes + requests being received + replies being sent
  uint64_t connections_open = 0;
  uint64_t connections_rejected = 0;  // closed for a failed or late handshake, a broken rule or limit, or the cap
  uint64_t accept_pauses = 0;         // times accepting paused for lack of descriptors
};

class TcpStoreServer {
 public:
  // Listens on `where` (port 0 picks one; give the address the ranks dial,
  // never 0.0.0.0) and serves until destroyed. `token` is the job's secret
  // (JobToken::unauthenticated() without one).
  static Result<std::unique_ptr<TcpStoreServer>> start(const SocketAddress& where, const JobToken& token,
                                                       const StoreLimits& limits = {});
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  SocketAddress address() const { return address_; }
  // A snapshot; callable from any thread.
  StoreStats stats() const;
  // The host (the local launcher) saw a rank fail: every wait in progress and
  // every later request fails with "rank <rank> failed: <message>", as if that
  // rank had posted it. Callable from any thread; does not block.
  void post_abort(int rank, const std::string& message);

  class Loop;  // engine/bootstrap/tcp_store_loop.h

 private:
  TcpStoreServer(std::unique_ptr<Loop> loop, SocketAddress address);
  std::unique_ptr<Loop> loop_;
  SocketAddress address_;
};

}  // namespace omnib
