// Builds a PlatformSpec in the current SimGrid engine: one host per rank
// (named by rank), its links, the routes. Call once, before the engine runs.
// The links are built without latency: the replay adds a path's latency
// after its bytes have left (simgrid_replay.cc says why).
#pragma once

#include <vector>

#include <simgrid/s4u.hpp>

#include "tools/simulate/platform_spec.h"

namespace omnib {

// Host speed: compute is given in seconds, run as flops at this speed.
inline constexpr double kSimulatedHostFlops = 1e9;

// The hosts of ranks 0 .. ranks-1.
std::vector<simgrid::s4u::Host*> build_platform(const PlatformSpec& spec, int ranks);

}  // namespace omnib
