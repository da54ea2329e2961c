// Builds the links a collective asks for. Every rank listens on one TCP port
// (published in the store as addr/<rank>); a collective names its links as
// (dialer, acceptor) pairs and every rank calls establish() with the same list,
// in the same order. Links from a rank to itself become in-process pairs.
//
// Every link opens with a challenge and a hello that proves the job token
// (link_hello.h). Anyone may connect to the port: a connection that fails
// its hello (another job, random bytes, a bad proof, silence past the
// timeout) is closed and counted, logged once on stderr, and establish()
// keeps waiting for the real peer. Hellos are read concurrently, so a silent
// stranger holds up nobody.
//
// Threads: one thread (the harness's) calls establish(); the links it
// returns follow the Connection rules.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/bootstrap/job_token.h"
#include "engine/bootstrap/store.h"
#include "engine/transport/connection.h"
#include "engine/transport/link_hello.h"
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
  // `token` is the job's secret (JobToken::unauthenticated() without one);
  // every rank of the job must pass the same one.
  static Result<std::unique_ptr<LinkFactory>> start(Store& store, int rank, int world, uint32_t job_id,
                                                    const JobToken& token, const std::string& bind_host,
                                                    std::chrono::milliseconds timeout);
  ~LinkFactory();

  // Blocks until every link of `specs` that involves this rank is up, or
  // fails: kTimeout when `timeout` passes (counted from the call), or
  // kUnavailable when a peer of the job breaks the protocol or the ranks
  // disagree on the plan. Strangers never make it fail.
  Result<LinkSet> establish(const std::vector<LinkSpec>& specs);

  int rank() const { return rank_; }
  int world() const { return world_; }
  uint32_t job_id() const { return job_id_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // Connections to the link port closed because they failed the hello.
  uint64_t rejected_connections() const { return rejected_; }

  // At most this many accepted connections wait for their hello at once; a
  // newer one pushes out the oldest (real peers answer within milliseconds).
  static constexpr size_t kMaxPendingHellos = 1024;

 private:
  // An accepted connection whose hello has not been read yet. Kept across
  // establish() calls: a peer may already be dialing for the next plan.
  struct PendingHello {
    int fd;
    Nonce nonce;
    OpeningFrameReader reader;
    SteadyClock::time_point expires;
  };
  // A link this rank dials, waiting for the acceptor's challenge.
  struct Outgoing {
    size_t link_id;
    int peer;
    int fd;
    OpeningFrameReader reader;
  };
  struct EarlyArrival {
    int dialer;
    std::unique_ptr<Connection> conn;
  };
  struct Plan;

  LinkFactory(Store& store, int rank, int world, uint32_t job_id, const JobToken& token, int listen_fd,
              std::chrono::milliseconds timeout)
      : store_(store), rank_(rank), world_(world), job_id_(job_id), token_(token), listen_fd_(listen_fd),
        timeout_(timeout) {}

  Result<int> dial_peer(int acceptor, SteadyClock::time_point deadline);
  // Accepts every waiting connection and sends it a challenge. False when
  // accepting failed for another reason than "none left" (out of descriptors).
  bool accept_pending();
  // Reads the challenge once it is all there and answers with the hello;
  // then out.fd belongs to the new link (and is -1 in `out`).
  Status answer_challenge(Outgoing& out, Plan& plan);
  // Reads what has come of p's hello. `finished`: p's descriptor is closed
  // (a stranger) or handed on (a link now or for a later plan). An error is
  // a rank of this job breaking the plan.
  Status read_hello(PendingHello& p, Plan& plan, bool& finished);
  // Puts an authenticated link into the plan if the plan expects it from `dialer`.
  Status take(Plan& plan, uint32_t link_id, int dialer, std::unique_ptr<Connection> conn);
  // Closes, counts and (the first time) logs a connection that failed its hello.
  void reject(int fd, const std::string& why);

  Store& store_;
  int rank_;
  int world_;
  uint32_t job_id_;
  JobToken token_;
  int listen_fd_;
  std::chrono::milliseconds timeout_;
  uint32_t next_plan_ = 0;
  std::map<int, SocketAddress> peer_addresses_;
  std::deque<PendingHello> pending_;
  // Connections whose hello named a later plan than the one being built.
  std::map<std::pair<uint32_t, uint32_t>, EarlyArrival> early_arrivals_;
  uint64_t rejected_ = 0;
};

}  // namespace omnib
