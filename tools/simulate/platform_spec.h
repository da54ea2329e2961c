// The simulated cluster: its topology and its links, as `--topology`,
// `--link-rate` and `--link-delay` give them, checked and sized to the job
// once, before anything is simulated. No SimGrid here: simgrid_platform.h
// builds the platform from this.
//
//   star                 every host on one link (each way) to a switch
//                        that never blocks: what --net emulate builds
//   fat-tree             two levels, leaf switches of up to 32 hosts, each
//                        leaf linked once to each spine (full bisection)
//   fat-tree:K           the same with leaves of K hosts
//   fat-tree:L;D;U;C     SimGrid's own: L levels, and per level the down
//                        links, up links and parallel links (comma lists),
//                        e.g. fat-tree:2;4,4;1,2;1,2
//   torus:X,Y,...        a torus of those dimensions (X*Y*... hosts)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

enum class TopologyKind { kStar, kFatTree, kTorus };

struct PlatformSpec {
  TopologyKind kind = TopologyKind::kStar;
  // Fat tree (after fit_to_ranks): SimGrid's parameters.
  unsigned levels = 0;
  std::vector<unsigned> down, up, count;
  unsigned leaf_hosts = 0;  // fat-tree and fat-tree:K before fitting; 0: explicit
  // Torus.
  std::vector<unsigned long> dims;
  uint64_t link_rate_bps = 10'000'000'000;
  double latency_s = 0;  // one way, per link

  // The canonical text (what the configuration's identity records).
  std::string text() const;
  // Hosts the topology holds.
  uint64_t hosts() const;
};

Result<PlatformSpec> parse_topology(const std::string& text);

// Sizes an automatic fat tree to `ranks` hosts and checks that the topology
// holds exactly that many.
Status fit_to_ranks(PlatformSpec& spec, int ranks);

}  // namespace omnib
