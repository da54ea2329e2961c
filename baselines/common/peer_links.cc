#include "baselines/common/peer_links.h"

#include <algorithm>
#include <set>

namespace omnib {

Result<PeerLinks> PeerLinks::establish(LinkFactory& factory, const PeerPairs& pairs) {
  std::vector<LinkSpec> specs;
  std::set<std::pair<int, int>> seen;
  for (auto [a, b] : pairs) {
    if (a == b) continue;
    const std::pair<int, int> key{std::min(a, b), std::max(a, b)};
    if (!seen.insert(key).second) continue;
    specs.push_back({key.first, key.second});
  }
  auto links = factory.establish(specs);
  if (!links.is_ok()) return links.status();
  PeerLinks result;
  result.links_ = links.take();
  const int me = factory.rank();
  for (size_t id = 0; id < specs.size(); ++id) {
    if (specs[id].dialer == me) result.by_peer_[specs[id].acceptor] = result.links_.dialer_end[id].get();
    if (specs[id].acceptor == me) result.by_peer_[specs[id].dialer] = result.links_.acceptor_end[id].get();
  }
  return result;
}

Connection* PeerLinks::to(int peer) const {
  auto it = by_peer_.find(peer);
  return it == by_peer_.end() ? nullptr : it->second;
}

Result<std::vector<PeerLinks>> establish_link_sets(LinkFactory& factory, const std::vector<PeerPairs>& plans) {
  std::vector<PeerLinks> sets;
  for (const PeerPairs& pairs : plans) {
    auto links = PeerLinks::establish(factory, pairs);
    if (!links.is_ok()) return links.status();
    sets.push_back(links.take());
  }
  return sets;
}

PeerPairs ring_pairs(int n) {
  PeerPairs pairs;
  for (int i = 0; i < n; ++i) pairs.push_back({i, (i + 1) % n});
  return pairs;
}

PeerPairs full_mesh_pairs(int n) {
  PeerPairs pairs;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) pairs.push_back({a, b});
  return pairs;
}

}  // namespace omnib
