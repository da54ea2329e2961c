// replay_schedule in a build without SimGrid (OMNIB_USE_SIMGRID=OFF, or no
// libsimgrid-dev): it says so and how to get it.
#include "tools/simulate/replay.h"

namespace omnib {

Result<ReplayOutcome> replay_schedule(const MessageSchedule&, const PlatformSpec&, const Calibration&) {
  return unavailable_error(
      "this build of omni-bench lacks SimGrid: install libsimgrid-dev (ci/setup.sh does) and configure again "
      "(docs/simulation.md)");
}

bool simulator_available() { return false; }

std::string simulator_version() { return "none"; }

}  // namespace omnib
