// replay_schedule in a child process of its own: SimGrid allows one engine
// per process, and a run simulates many points. The child inherits the
// schedule (copy on write), replays it and writes the outcome to a pipe;
// the parent waits for it. Blocks until the child ends.
#pragma once

#include "tools/simulate/replay.h"

namespace omnib {

Result<ReplayOutcome> replay_in_child(const MessageSchedule& schedule, const PlatformSpec& platform,
                                      const Calibration& calibration);

}  // namespace omnib
