// Builds the links a collective asks for. A collective names its links as
// (dialer, acceptor) pairs and every rank calls establish() with the same
// list, in the same order; each call is a numbered plan. Links from a rank to
// itself become in-process pairs; the others come from this rank's transport
// device (transport_device.h: TCP by default, or libfabric), which opens
// every link with a hello that proves the job token and turns strangers away.
//
// Threads: one thread (the harness's) calls establish(); the links it
// returns follow the Connection rules. The factory must outlive them.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/auth/job_token.h"
#include "engine/store/store.h"
#include "engine/transport/connection.h"
#include "engine/links/open_transport.h"
#include "engine/transport/transport_device.h"

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
  // Opens this rank's device for `transport` (its address goes into the
  // store). `token` is the job's secret (JobToken::unauthenticated() without
  // one); every rank of the job must pass the same one. Errors are those of
  // open_transport_device.
  static Result<std::unique_ptr<LinkFactory>> start(Store& store, int rank, int world, uint32_t job_id,
                                                    const JobToken& token, const std::string& bind_host,
                                                    std::chrono::milliseconds timeout,
                                                    const TransportChoice& transport = {});

  // Blocks until every link of `specs` that involves this rank is up, or
  // fails: kTimeout when `timeout` passes (counted from the call), or
  // kUnavailable when a peer of the job breaks the protocol or the ranks
  // disagree on the plan. Strangers never make it fail.
  Result<LinkSet> establish(const std::vector<LinkSpec>& specs);

  int rank() const { return rank_; }
  int world() const { return world_; }
  uint32_t job_id() const { return job_id_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // Connections turned away: those that failed their hello, and authentic
  // ones for a plan already built.
  uint64_t rejected_connections() const { return device_->rejected_connections() + stale_; }
  // The transport, for the run's header.
  std::string describe() const { return device_->describe(); }

 private:
  struct EarlyArrival {
    int dialer;
    std::unique_ptr<Connection> conn;
  };
  struct Plan;

  LinkFactory(std::unique_ptr<TransportDevice> device, int rank, int world, uint32_t job_id,
              std::chrono::milliseconds timeout)
      : device_(std::move(device)), rank_(rank), world_(world), job_id_(job_id), timeout_(timeout) {}

  // Puts an opened link where it belongs: this plan, a later one, or away.
  Status place(Plan& plan, OpenedLink link);
  // Puts an authenticated link into the plan if the plan expects it from `dialer`.
  Status take(Plan& plan, uint32_t link_id, int dialer, std::unique_ptr<Connection> conn);

  std::unique_ptr<TransportDevice> device_;
  int rank_;
  int world_;
  uint32_t job_id_;
  std::chrono::milliseconds timeout_;
  uint32_t next_plan_ = 0;
  // Links whose hello named a later plan than the one being built.
  std::map<std::pair<uint32_t, uint32_t>, EarlyArrival> early_arrivals_;
  uint64_t stale_ = 0;
};

}  // namespace omnib
