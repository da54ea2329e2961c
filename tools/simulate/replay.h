// Replays a message schedule on a simulated platform (SimGrid's flow-level
// CM02 model, docs/simulation.md) and says how long the collective took.
// A SimGrid engine can be made once per process: replay_schedule must run
// in a process of its own (forked_replay.h does that), never twice in one.
#pragma once

#include <cstdint>
#include <string>

#include "engine/base/status.h"
#include "tools/schedule/message_schedule.h"
#include "tools/simulate/calibration.h"
#include "tools/simulate/platform_spec.h"

namespace omnib {

struct ReplayOutcome {
  double time_s = 0;          // the last message's arrival (or local step's end)
  uint64_t flows = 0;         // network messages simulated
  uint64_t peak_flows = 0;    // the most in flight at once
};

// Unavailable (exit 6) in a build without SimGrid.
Result<ReplayOutcome> replay_schedule(const MessageSchedule& schedule, const PlatformSpec& platform,
                                      const Calibration& calibration);

// Whether this build has SimGrid, and its version ("SimGrid 3.32.0").
bool simulator_available();
std::string simulator_version();

}  // namespace omnib
