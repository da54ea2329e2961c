// The cores this process may run on: what the omni engine's direct route
// sizes its lanes by (engine/omni/direct_lanes.h) and what the harness's
// memory floor gives each rank's threads (tools/measure/memory_floor.h).
#pragma once

namespace omnib {

// The count of the affinity mask (taskset, cgroups' cpusets), else every
// online core.
int usable_cores();

}  // namespace omnib
