#include "engine/omni/omni_peers.h"

namespace omnib {

std::vector<LinkSpec> OmniPeers::link_specs(const JobLayout& job) {
  const int shards = job.aggregators > 0 ? job.aggregators : job.nodes;
  std::vector<LinkSpec> specs;
  for (int w = 0; w < job.nodes; ++w)
    for (int s = 0; s < shards; ++s) specs.push_back({w, job.aggregators > 0 ? job.nodes + s : s});
  return specs;
}

void OmniPeers::detach_wakers() {
  for (auto* ends : {&links_.dialer_end, &links_.acceptor_end})
    for (auto& c : *ends)
      if (c) c->set_wakers(nullptr, nullptr);
}

int OmniPeers::my_shard() const {
  if (job_.aggregators > 0) return job_.rank >= job_.nodes ? job_.rank - job_.nodes : -1;
  return job_.rank;
}

}  // namespace omnib
