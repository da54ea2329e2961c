// How many lanes the omni engine's direct route runs on. Two lanes (one
// sending, one summing) overlap a rank's scan with its sums, which pays
// when each rank has cores to spare; where a host's workers have fewer
// cores than two busy threads each, the lanes only take turns on the cores
// and hand the work across them, and one lane doing both is faster (at 4
// ranks on 2 cores, 1 Gbit/s, scattered density 0.001: omni over
// allgather 0.95 on one lane, 1.105 on two; docs/algorithms.md, "Threads
// and windows").
#pragma once

#include "engine/base/status.h"
#include "engine/base/usable_cores.h"
#include "engine/omni/settings/omni_settings.h"

namespace omnib {

// 1 or 2: `forced` (the variable's value, null when unset) if set, else 1
// when `local_workers` need more than `cores` for two busy lanes each.
Result<int> direct_route_lanes(const char* forced, int local_workers, int cores);

}  // namespace omnib
