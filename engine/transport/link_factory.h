// Builds the links a collective asks for. Every rank listens on one TCP port
// (published in the store as addr/<rank>); a collective names its links as
// (dialer, acceptor) pairs and every rank calls establish() with the same list,
// in the same order. Links from a rank to itself become in-process pairs.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/bootstrap/store.h"
#include "engine/transport/connection.h"
#include "engine/transport/socket_util.h"

namespace omnib {

struct LinkSpec {
  int dialer = 0;
  int acceptor = 0;
};

// Both ends of every link this rank takes part in, indexed like the specs.
// For a link to itself the rank holds both ends.
struct LinkSet {
  std::vector<std::unique_ptr<Connection>> dialer_end;
  std::vector<std::unique_ptr<Connection>> acceptor_end;

  // Aborts every connection (unblocks all waiting threads).
  void abort_all();
  // Sum of bytes that crossed the wire on these links.
  ByteCounters wire_counters() const;
};

class LinkFactory {
 public:
  // Listens on bind_host (port 0) and publishes the address under addr/<rank>.
  static Result<std::unique_ptr<LinkFactory>> start(Store& store, int rank, int world, uint32_t job_id,
                                                    const std::string& bind_host,
                                                    std::chrono::milliseconds timeout);
  ~LinkFactory();

  Result<LinkSet> establish(const std::vector<LinkSpec>& specs);

  int rank() const { return rank_; }
  int world() const { return world_; }
  uint32_t job_id() const { return job_id_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  LinkFactory(Store& store, int rank, int world, uint32_t job_id, int listen_fd, std::chrono::milliseconds timeout)
      : store_(store), rank_(rank), world_(world), job_id_(job_id), listen_fd_(listen_fd), timeout_(timeout) {}

  Store& store_;
  int rank_;
  int world_;
  uint32_t job_id_;
  int listen_fd_;
  std::chrono::milliseconds timeout_;
  uint32_t next_plan_ = 0;
  std::map<int, SocketAddress> peer_addresses_;
  // Connections that arrived for a later plan than the one being built.
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<Connection>> early_arrivals_;
};

}  // namespace omnib
