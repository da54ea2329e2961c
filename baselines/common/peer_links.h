// Pairwise links for the CPU baselines: each unordered pair of worker ranks
// that must talk gets one bidirectional connection (the lower rank dials).
//
// Every rank of the job, dedicated aggregator ranks included, must call
// establish() with the same pair list in the same order: LinkFactory numbers
// its plans per call, so a rank that skipped one would pair up wrongly later.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "engine/base/status.h"
#include "engine/links/link_factory.h"

namespace omnib {

// Pairs of ranks that need a link, as PeerLinks::establish takes them.
using PeerPairs = std::vector<std::pair<int, int>>;

class PeerLinks {
 public:
  // Links for `pairs` (order within a pair, duplicates and self pairs are
  // ignored). Blocks until every link of this rank is up or the timeout passes.
  static Result<PeerLinks> establish(LinkFactory& factory, const PeerPairs& pairs);

  // The connection to `peer`, or nullptr when the plan has no link to it.
  // Owned by this object; valid until it is destroyed.
  Connection* to(int peer) const;

  void abort_all() { links_.abort_all(); }
  ByteCounters wire_counters() const { return links_.wire_counters(); }

 private:
  LinkSet links_;
  std::map<int, Connection*> by_peer_;
};

// One link set per plan, established in the plans' order (every rank must
// give the same plans: see establish()).
Result<std::vector<PeerLinks>> establish_link_sets(LinkFactory& factory, const std::vector<PeerPairs>& plans);

// The pairs of a ring over ranks [0, n): {i, i+1 mod n}.
PeerPairs ring_pairs(int n);

// Every pair of ranks in [0, n): a full mesh.
PeerPairs full_mesh_pairs(int n);

}  // namespace omnib
