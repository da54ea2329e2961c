// How one rank meets the others before any collective runs: it connects to
// the job's store (serving it first when it is rank 0 under an external
// launcher), learns the job id, opens its transport device (TCP or libfabric;
// its address goes into the store), gathers every rank's host name, and times
// a few barriers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/store/store.h"
#include "engine/bootstrap/tcp_store_server.h"
#include "engine/links/link_factory.h"
#include "tools/launch/launch_env.h"

namespace omnib {

struct RankRendezvous {
  std::unique_ptr<TcpStoreServer> server;  // rank 0 under an external launcher; else null
  std::unique_ptr<Store> store;
  uint32_t job_id = 0;
  std::vector<std::string> hosts;  // every rank's host name, in rank order
  std::unique_ptr<LinkFactory> links;  // refers to *store: destroy it first
  double barrier_latency_us = 0;   // this rank's median of a few store barriers
};

// Blocks until every rank of `launch` (world ranks) has met, each store wait
// lasting at most `timeout_s` seconds (-T). Errors: kUsage for a timeout
// outside 1..kMaxWaitTimeout or a store address this host cannot serve;
// kTimeout / kUnavailable from the store (a rank missing, or one that
// failed); kUnavailable when the transport cannot open; kInternal when the store holds a malformed job id.
Result<RankRendezvous> rendezvous_rank(const LaunchEnv& launch, int64_t timeout_s,
                                       const TransportChoice& transport = {});

}  // namespace omnib
