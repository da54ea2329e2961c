// What the rendezvous store holds and who waits on it, without sockets: the
// server (tcp_store_server.cc) feeds it authenticated requests and sends the
// replies it produces.
//
// Memory stays flat over any number of calls: a barrier or a gather exists
// only while it is in progress and is erased when its last reply is made;
// only plain keys (set) stay, and the harness sets a fixed number per job.
//
// Not thread-safe: the server's loop thread alone calls it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/bootstrap/store_protocol.h"

namespace omnib {

class StoreState {
 public:
  using ConnId = uint64_t;
  struct Reply {
    ConnId to;
    store_wire::ReplyStatus status;
    // Shared: one gather result goes to every rank without a copy each.
    std::shared_ptr<const std::string> payload;
  };
  using Replies = std::vector<Reply>;

  struct Counts {
    uint64_t keys = 0;                 // plain keys (set)
    uint64_t value_bytes = 0;          // bytes of keys, values, gather parts and names held
    uint64_t pending_collectives = 0;  // barriers and gathers in progress
    uint64_t waiters = 0;              // connections waiting for a reply
  };

  explicit StoreState(const StoreLimits& limits) : limits_(limits) {}

  // Handles one request of connection `from` (a connection has at most one
  // request in progress). Appends every reply it makes: to `from`, and to
  // the connections whose wait it ends.
  void handle(ConnId from, const store_wire::StoreRequest& req, std::string key, std::string value, Replies& out);

  // The job failed: every wait in progress and every later request fails
  // with "rank R failed: message". The first failure posted is kept.
  void abort(int rank, const std::string& message, Replies& out);

  // Connection `conn` closed: forget its wait. What it contributed stays, so
  // the others' barrier or gather still completes if it already arrived.
  void drop(ConnId conn);

  Counts counts() const;

 private:
  enum class WaitKind { kGet, kBarrier, kGather };
  struct Barrier {
    uint32_t world = 0;
    uint32_t arrived = 0;
    std::vector<ConnId> waiters;
  };
  struct Gather {
    uint32_t world = 0;
    uint8_t flags = 0;
    uint32_t contributed = 0;
    std::vector<std::optional<std::string>> parts;
    std::map<ConnId, uint32_t> waiters;  // connection -> its rank
  };

  void set(ConnId from, std::string key, std::string value, Replies& out);
  void get(ConnId from, const std::string& key, Replies& out);
  void barrier(ConnId from, const std::string& name, uint32_t world, Replies& out);
  void gather(ConnId from, const std::string& name, uint32_t rank, uint32_t world, uint8_t flags, std::string part,
              Replies& out);
  void finish_gather(std::map<std::string, Gather>::iterator it, Replies& out);
  void wait(ConnId conn, WaitKind kind, const std::string& name);
  static Reply refuse(ConnId to, std::string why);

  StoreLimits limits_;
  std::map<std::string, std::string> data_;
  std::map<std::string, std::vector<ConnId>> get_waiters_;
  std::map<std::string, Barrier> barriers_;
  std::map<std::string, Gather> gathers_;
  std::unordered_map<ConnId, std::pair<WaitKind, std::string>> waiting_;
  uint64_t value_bytes_ = 0;
  std::shared_ptr<const std::string> abort_message_;
};

}  // namespace omnib
