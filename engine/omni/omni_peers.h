// Who an omni rank talks to: one link per (worker, shard) pair of the job
// (LinkSet, engine/links/link_factory.h), and which rank hosts which
// shard. Shards sit on the workers themselves, or on the dedicated
// aggregator ranks after them (JobLayout).
//
// The lanes share this object; each reads only the links of its role (a
// worker's lanes its links to the shards, a shard's lane its links from the
// workers), and the connections themselves are thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/collective/collective.h"
#include "engine/links/link_factory.h"

namespace omnib {

class OmniPeers {
 public:
  // The links an omni job needs, worker by worker, shard by shard.
  static std::vector<LinkSpec> link_specs(const JobLayout& job);

  OmniPeers(const JobLayout& job, LinkSet links) : job_(job), links_(std::move(links)) {}

  const JobLayout& job() const { return job_; }
  int workers() const { return job_.nodes; }
  int shards() const { return job_.aggregators > 0 ? job_.aggregators : job_.nodes; }
  int shard_rank(int shard) const { return job_.aggregators > 0 ? job_.nodes + shard : shard; }
  // The shard this rank hosts, or -1.
  int my_shard() const;

  // This worker's link to `shard`, and this shard's link from `worker`.
  Connection& to_shard(int shard) const { return *links_.dialer_end[link_id(job_.rank, shard)]; }
  Connection& from_worker(int worker) const { return *links_.acceptor_end[link_id(worker, my_shard())]; }

  // Every waiting lane wakes to the failure.
  void abort() { links_.abort_all(); }
  // No link tells a lane's waker anything from now on: call before the
  // wakers die (the network thread may outlive them).
  void detach_wakers();
  ByteCounters wire_counters() const { return links_.wire_counters(); }

 private:
  size_t link_id(int worker, int shard) const { return static_cast<size_t>(worker * shards() + shard); }

  JobLayout job_;
  LinkSet links_;
};

}  // namespace omnib
