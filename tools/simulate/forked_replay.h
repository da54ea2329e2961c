// replay_schedule in a child process of its own: SimGrid allows one engine
// per process, and a run simulates many points. The child inherits the
// schedule (copy on write), replays it and writes the outcome to a socket pair;
// the parent waits for it, at most `limit`: past it the child is killed and
// the result is kTimeout, naming --point-timeout.
#pragma once

#include <chrono>

#include "tools/simulate/replay.h"

namespace omnib {

Result<ReplayOutcome> replay_in_child(const MessageSchedule& schedule, const PlatformSpec& platform,
                                      const Calibration& calibration, std::chrono::seconds limit);

}  // namespace omnib
